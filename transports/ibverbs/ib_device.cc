// Device, port and GID choice (see ib_device.h).
#include "transports/ibverbs/ib_device.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

namespace braid::transport::ib {
namespace {

bool isZero(const ibv_gid& gid) {
  static const ibv_gid kZero{};
  return std::memcmp(&gid, &kZero, sizeof gid) == 0;
}

// ::ffff:a.b.c.d: the GID of an IPv4 address, the one RoCE v2 routes without IPv6.
bool isIpv4Mapped(const ibv_gid& gid) {
  static const uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(gid.raw, kPrefix, sizeof kPrefix) == 0;
}

const char* portStateName(ibv_port_state s) {
  switch (s) {
    case IBV_PORT_ACTIVE:
      return "ACTIVE";
    case IBV_PORT_DOWN:
      return "DOWN";
    case IBV_PORT_INIT:
      return "INIT";
    case IBV_PORT_ARMED:
      return "ARMED";
    default:
      return "not active";
  }
}

struct DeviceList {
  const VerbsApi& api;
  ibv_device** list = nullptr;
  int count = 0;
  ~DeviceList() {
    if (list != nullptr) api.freeDeviceList(list);
  }
};

}  // namespace

std::string gidTypeOf(const std::string& device, int port, int index) {
  std::ifstream in("/sys/class/infiniband/" + device + "/ports/" + std::to_string(port) +
                   "/gid_attrs/types/" + std::to_string(index));
  std::string type;
  std::getline(in, type);
  return type;
}

Result<std::unique_ptr<IbDevice>> IbDevice::open(const VerbsApi& api, const std::string& hca,
                                                 int gidIndex, int cqEntries) {
  std::string wantName = hca;
  int wantPort = 0;  // 0: the first active one
  if (size_t colon = hca.find(':'); colon != std::string::npos) {
    wantName = hca.substr(0, colon);
    char* end = nullptr;
    long p = std::strtol(hca.c_str() + colon + 1, &end, 10);
    if (end == hca.c_str() + colon + 1 || *end != '\0' || p < 1 || p > 255) {
      return invalidArgument("BRAID_IB_HCA='" + hca + "': the port after ':' must be 1..255");
    }
    wantPort = static_cast<int>(p);
  }
  DeviceList devices{api};
  devices.list = api.getDeviceList(&devices.count);
  if (devices.list == nullptr || devices.count == 0) {
    return invalidUsage("ib transport: no RDMA device found (ibv_get_device_list: " +
                        std::string(devices.list == nullptr ? std::strerror(errno) : "empty") +
                        "); load a driver or use BRAID_TRANSPORT=socket");
  }
  std::unique_ptr<IbDevice> dev(new IbDevice(api));
  std::string seen;  // "rxe0 port 1 DOWN, ..." for the error when nothing fits
  for (int d = 0; d < devices.count && dev->context_ == nullptr; ++d) {
    const std::string name = api.getDeviceName(devices.list[d]);
    if (!wantName.empty() && name != wantName) {
      seen += (seen.empty() ? "" : ", ") + name;
      continue;
    }
    ibv_context* ctx = api.openDevice(devices.list[d]);
    if (ctx == nullptr) {
      seen += (seen.empty() ? "" : ", ") + name + " (cannot open: " + std::strerror(errno) + ")";
      continue;
    }
    ibv_device_attr attr{};
    int ports = api.queryDevice(ctx, &attr) == 0 ? attr.phys_port_cnt : 1;
    for (int p = 1; p <= ports; ++p) {
      if (wantPort != 0 && p != wantPort) continue;
      ibv_port_attr pa{};
      if (api.queryPort(ctx, static_cast<uint8_t>(p), &pa) != 0) continue;
      if (pa.state != IBV_PORT_ACTIVE) {
        seen += (seen.empty() ? "" : ", ") + name + " port " + std::to_string(p) + " " +
                portStateName(pa.state);
        continue;
      }
      dev->context_ = ctx;  // closed by dev's destructor from here on, also on errors
      PortChoice& c = dev->port_;
      c.device = name;
      c.port = static_cast<uint8_t>(p);
      c.lid = pa.lid;
      c.mtu = pa.active_mtu;
      c.ethernet = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
      // Choose the GID: the one asked for, else (RoCE) the best of the table.
      int chosen = -1, v2 = -1;
      if (gidIndex >= 0) {
        if (gidIndex >= pa.gid_tbl_len) {
          return invalidArgument("BRAID_IB_GID_INDEX=" + std::to_string(gidIndex) + ": " + name +
                                 " port " + std::to_string(p) + " has " +
                                 std::to_string(pa.gid_tbl_len) + " GIDs");
        }
        chosen = gidIndex;
      } else if (c.ethernet) {
        for (int i = 0; i < pa.gid_tbl_len && chosen < 0; ++i) {
          ibv_gid g{};
          if (api.queryGid(ctx, c.port, i, &g) != 0 || isZero(g)) continue;
          if (gidTypeOf(name, p, i) != "RoCE v2") continue;
          if (v2 < 0) v2 = i;
          if (isIpv4Mapped(g)) chosen = i;
        }
        if (chosen < 0) chosen = v2 >= 0 ? v2 : 0;
      } else {
        chosen = 0;
      }
      if (api.queryGid(ctx, c.port, chosen, &c.gid) != 0 || (c.ethernet && isZero(c.gid))) {
        return invalidArgument(
            std::string(gidIndex >= 0 ? "BRAID_IB_GID_INDEX=" : "ib transport: GID index ") +
            std::to_string(chosen) + " of " + name + " port " + std::to_string(p) +
            " holds no address (an unset GID; choose a populated one, see ibv_devinfo -v)");
      }
      c.gidIndex = chosen;
      c.gidType = gidTypeOf(name, p, chosen);
      break;
    }
    if (dev->context_ == nullptr) api.closeDevice(ctx);
  }
  if (dev->context_ == nullptr) {
    std::string what = wantName.empty() ? "no RDMA device has an active port"
                                        : "BRAID_IB_HCA='" + hca + "' names no active port";
    return invalidUsage("ib transport: " + what + " (seen: " + (seen.empty() ? "none" : seen) +
                        ")");
  }
  dev->pd_ = api.allocPd(dev->context_);
  if (dev->pd_ == nullptr)
    return systemError("ib transport: ibv_alloc_pd on " + dev->describe(), errno);
  dev->channel_ = api.createCompChannel(dev->context_);
  if (dev->channel_ == nullptr) {
    return systemError("ib transport: ibv_create_comp_channel on " + dev->describe(), errno);
  }
  dev->cq_ = api.createCq(dev->context_, cqEntries, nullptr, dev->channel_, 0);
  if (dev->cq_ == nullptr) {
    return systemError(
        "ib transport: ibv_create_cq(" + std::to_string(cqEntries) + ") on " + dev->describe(),
        errno);
  }
  return dev;
}

IbDevice::~IbDevice() {
  if (cq_ != nullptr) api_.destroyCq(cq_);
  if (channel_ != nullptr) api_.destroyCompChannel(channel_);
  if (pd_ != nullptr) api_.deallocPd(pd_);
  if (context_ != nullptr) api_.closeDevice(context_);
}

std::string IbDevice::describe() const {
  return port_.device + " port " + std::to_string(port_.port) + " GID " +
         std::to_string(port_.gidIndex) + (port_.gidType.empty() ? "" : " (" + port_.gidType + ")");
}

}  // namespace braid::transport::ib
