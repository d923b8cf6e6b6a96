// Finding libbraid_cuda.so, and routing a communicator's device calls by its own device state
// (comm/device_side.h; see the header).
#include "comm/device_path.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>

#include "collectives/device/cuda/device_path_abi.h"
#include "comm/comm.h"
#include "comm/device_proxy/proxy_hooks.h"
#include "comm/device_side.h"
#include "core/device_memory.h"
#include "core/log.h"

namespace braid {
namespace {

constexpr size_t kErrorBytes = 512;
constexpr const char* kDeviceLibraryName = "libbraid_cuda.so";

// libbraid_cuda.so from the directory this library was loaded from (build tree or install
// prefix: both put the two side by side), then the loader's search path. Looked up once;
// null when absent (a CPU-only build) or unloadable (why names the loader's error).
const BraidDevicePath* deviceApi(std::string* why) {
  static const BraidDevicePath* api = nullptr;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string beside = deviceLibraryCandidate();
    void* lib = beside.empty() ? nullptr : dlopen(beside.c_str(), RTLD_NOW);
    std::string besideError;
    if (lib == nullptr && !beside.empty()) {
      const char* e = dlerror();
      besideError = e ? e : "";
    }
    if (lib == nullptr) lib = dlopen(kDeviceLibraryName, RTLD_NOW);
    if (lib == nullptr) {
      // A file that exists but does not load (missing cudart, ...) is worth naming.
      failure = besideError.find("No such file") == std::string::npos && !besideError.empty()
                    ? "libbraid_cuda.so could not be loaded: " + besideError
                    : "libbraid_cuda.so was not found (this braid was built without CUDA)";
      return;
    }
    using Entry = const BraidDevicePath* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(lib, "braidDevicePath"));
    const BraidDevicePath* table = entry ? entry() : nullptr;
    if (table == nullptr || table->version != kBraidDevicePathVersion ||
        table->size < sizeof(BraidDevicePath)) {
      failure = "libbraid_cuda.so does not match this libbraid (another braid version)";
      return;
    }
    api = table;
  });
  if (api == nullptr && why != nullptr) *why = failure;
  return api;
}

// BraidAllGatherFn over a communicator's bootstrap.
int bootstrapAllGather(void* context, void* data, size_t bytes, char* error, size_t errorBytes) {
  const Status s = static_cast<Comm*>(context)->bootstrap().allGather(data, bytes);
  if (s.isOk()) return 0;
  std::snprintf(error, errorBytes, "%s", s.message().c_str());
  return 1;
}

Status fromCode(int code, const char* error) {
  switch (code) {
    case 0:
      return Status::ok();
    case 2:
      return invalidUsage(error);
    case 3:
      return invalidArgument(error);
    default:
      return internalError(error);
  }
}

}  // namespace

std::string deviceLibraryCandidate() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&deviceListSupported), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  const std::string self = info.dli_fname;
  const size_t slash = self.find_last_of('/');
  if (slash == std::string::npos) return "";
  return self.substr(0, slash + 1) + kDeviceLibraryName;
}

bool deviceListSupported(const int* devlist, int ndev, std::string* why) {
  for (int r = 1; r < ndev; ++r) {
    if (devlist[r] != devlist[0]) {
      *why =
          "the ranks name different devices, and this build drives ranks sharing one device only";
      return false;
    }
  }
  return deviceApi(why) != nullptr;
}

Status attachDeviceGroup(const std::vector<Comm*>& comms, const int* devlist) {
  std::string why;
  const BraidDevicePath* api = deviceApi(&why);
  if (api == nullptr) return invalidUsage(why);
  char error[kErrorBytes] = "";
  const Config& config = comms.front()->config();  // the ranks' agreed settings
  void* raw = api->createGroup(int(comms.size()), devlist[0], config.algorithm.c_str(),
                               config.protocol.c_str(), error, sizeof(error));
  if (raw == nullptr) return internalError(std::string("creating the device group: ") + error);
  std::shared_ptr<void> group(raw, api->releaseGroup);
  for (Comm* c : comms) {
    c->ensureDeviceSide().group = group;  // the last rank destroyed releases it
    c->setDevice(devlist[0]);             // deviceListSupported: every rank names devlist[0]
  }
  return Status::ok();
}

void allowPeerDevices(Comm* comm) {
  // Ranks on several hosts, or BRAID_P2P_DISABLE=1: device buffers take the host proxy.
  if (comm->config().p2pDisable) return;
  const std::vector<int>& hosts = *comm->hosts();
  for (int host : hosts) {
    if (host != hosts[0]) return;
  }
  comm->ensureDeviceSide().peerCandidate = true;
}

void* deviceLibrarySymbol(const char* name, std::string* why) {
  const BraidDevicePath* api = deviceApi(why);
  Dl_info info;
  if (api == nullptr || dladdr(api, &info) == 0 || info.dli_fname == nullptr) return nullptr;
  void* lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);  // loaded: no second copy
  return lib != nullptr ? dlsym(lib, name) : nullptr;
}

BufferMemory decideMemory(const Op& op) {
  // Host buffers cost a few nanoseconds per query while CUDA is not loaded; in place, one
  // query serves both buffers.
  const bool send = isDeviceMemory(op.send);
  const bool recv = op.recv == op.send ? send : isDeviceMemory(op.recv);
  if (!send && !recv) return BufferMemory::kHost;
  // A buffer not given (null) takes the other's kind: a root's broadcast, a send or a recv.
  const bool sendMatches = op.send == nullptr || send;
  const bool recvMatches = op.recv == nullptr || recv;
  return sendMatches && recvMatches ? BufferMemory::kDevice : BufferMemory::kMixed;
}

namespace {

// The first device-buffer collective of a one-rank-per-process communicator: every rank
// makes the same call, so every rank gets here and creates its part of the cuda_p2p group
// (collective over the bootstrap). Ranks on several hosts are refused alike on every rank
// (the host table is the same everywhere), before any exchange. The group lives on the
// communicator's device, bound by its first device-buffer call (the C API), so no buffer is
// asked again.
Status attachPeerGroup(Comm* comm) {
  std::string why;
  const BraidDevicePath* api = deviceApi(&why);
  if (api == nullptr) return invalidUsage(why);
  const std::vector<int>& hosts = *comm->hosts();
  for (size_t r = 1; r < hosts.size(); ++r) {
    if (hosts[r] != hosts[0]) {
      return invalidUsage("device buffers: rank " + std::to_string(r) +
                          " is on another host than rank 0; cuda_p2p joins GPUs of one node "
                          "only (device buffers across hosts are not available yet)");
    }
  }
  char error[kErrorBytes] = "";
  void* raw = api->createPeerGroup(
      comm->rank(), comm->nranks(), comm->device(), comm->config().algorithm.c_str(),
      comm->config().protocol.c_str(), &bootstrapAllGather, comm, error, sizeof(error));
  if (raw == nullptr) {
    return internalError(std::string("creating the cuda_p2p device group: ") + error);
  }
  DeviceSide& side = comm->ensureDeviceSide();
  side.group = std::shared_ptr<void>(raw, api->releaseGroup);
  side.peerCandidate = false;
  return Status::ok();
}

// The device group `op.comm` is bound to, creating a cuda_p2p group on a peer candidate's
// first device-buffer call; null: the communicator's device buffers take the host proxy.
std::shared_ptr<void> deviceGroupFor(const Op& op) {
  DeviceSide* side = op.comm->deviceSide();
  if (side == nullptr) return nullptr;
  if (side->group == nullptr && side->peerCandidate) {  // a peer candidate's first call
    const Status attached = attachPeerGroup(op.comm);
    if (!attached.isOk()) {
      // Every rank decided from the same exchanged records, so all fall back together.
      BRAID_WARN("%s; device buffers go through the host proxy instead",
                 attached.message().c_str());
      side->peerCandidate = false;
    }
  }
  return side->group;
}

// Whether a device group's kernels run `op`: every collective but all-to-all-v. The rest
// (send/recv, all-to-all-v) takes the host proxy on every communicator, decided before
// deviceGroupFor: a cuda_p2p group is created collectively by a communicator's first device
// call, which a send between two of its ranks cannot be.
bool groupKernelsRun(const Op& op) {
  return op.kind == OpKind::kCollective && op.coll != coll::CollKind::kAllToAllv;
}

// One op on a device group's kernels (groupKernelsRun(op) holds).
Status enqueueOnGroup(void* group, const Op& op, void* stream) {
  const BraidDevicePath* api = deviceApi(nullptr);
  const BraidDeviceCall call{static_cast<int>(op.coll),
                             op.count,
                             static_cast<int>(op.type),
                             static_cast<int>(op.op),
                             op.root,
                             op.comm->rank(),
                             op.comm->nranks(),
                             isInPlace(op) ? 1 : 0};
  char error[kErrorBytes] = "";
  return fromCode(api->enqueue(group, &call, op.send, op.recv, stream, error, sizeof(error)),
                  error);
}

}  // namespace

Status checkDeviceBuffers(const Op& op) {
  if (op.memory != BufferMemory::kMixed) return Status::ok();
  return invalidUsage(std::string(op.apiName) +
                      ": one buffer is CUDA device memory and the other is not; pass both on "
                      "the communicator's device");
}

Status enqueueOnDevice(const Op& op, void* stream) {
  BRAID_RETURN_IF_ERROR(checkDeviceBuffers(op));
  std::shared_ptr<void> group = groupKernelsRun(op) ? deviceGroupFor(op) : nullptr;
  if (group == nullptr) return enqueueOnProxy(op, stream);  // no device group: host proxy
  return enqueueOnGroup(group.get(), op, stream);
}

Status enqueueDeviceGroup(const std::vector<Op>& ops, const std::vector<void*>& streams) {
  // One pass per communicator, in the order of their first call; each is enqueued even when
  // another failed, so no peer waits for a part this rank dropped.
  std::vector<Comm*> comms;
  for (const Op& op : ops) {
    if (std::find(comms.begin(), comms.end(), op.comm) == comms.end()) comms.push_back(op.comm);
  }
  Status first;
  for (Comm* comm : comms) {
    std::vector<Op> mine;
    std::vector<void*> mineStreams;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].comm != comm) continue;
      mine.push_back(ops[i]);
      mineStreams.push_back(streams[i]);
    }
    // The collectives' path may depend only on the collectives, which every rank calls
    // alike: sends and receives differ from rank to rank, and a rank whose part of the group
    // had none would otherwise run the collectives elsewhere than its peers (or create the
    // cuda_p2p group alone). So on a device group the kernels take the collectives and the
    // proxy the rest, as one batch behind them; without one the proxy takes the whole group.
    std::vector<Op> rest;
    std::vector<void*> restStreams;
    const auto collective = std::find_if(mine.begin(), mine.end(), groupKernelsRun);
    std::shared_ptr<void> group = collective != mine.end() ? deviceGroupFor(*collective) : nullptr;
    Status s;
    if (group == nullptr) {
      s = enqueueGroupOnProxy(mine, mineStreams);
    } else {
      for (size_t i = 0; i < mine.size(); ++i) {
        if (!groupKernelsRun(mine[i])) {
          rest.push_back(mine[i]);
          restStreams.push_back(mineStreams[i]);
        } else if (s.isOk()) {
          s = enqueueOnGroup(group.get(), mine[i], mineStreams[i]);
        }
      }
      if (!rest.empty()) {
        const Status p = enqueueGroupOnProxy(rest, restStreams);
        if (s.isOk()) s = p;
      }
    }
    if (first.isOk() && !s.isOk()) first = s;
  }
  return first;
}

}  // namespace braid
