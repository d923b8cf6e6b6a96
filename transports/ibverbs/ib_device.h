// The RDMA device, port and GID a rank uses, and the verbs objects every
// connection of its communicator shares (protection domain, completion queue
// and the channel a waiting rank sleeps on).
#pragma once

#include <infiniband/verbs.h>

#include <memory>
#include <string>

#include "core/status.h"
#include "transports/ibverbs/verbs_api.h"

namespace braid::transport::ib {

/// What a rank chose, as the logs and errors name it.
struct PortChoice {
  std::string device;  // e.g. "mlx5_0", "rxe0"
  uint8_t port = 1;
  int gidIndex = 0;
  ibv_gid gid{};
  uint16_t lid = 0;
  bool ethernet = false;  // RoCE (GID-addressed) rather than InfiniBand (LID-addressed)
  ibv_mtu mtu = IBV_MTU_1024;
  std::string gidType;  // "RoCE v2", "RoCE v1", "IB" (sysfs), "" when unknown
};

/// `hca`: BRAID_IB_HCA, "" (the first device with an active port) or "name" or
/// "name:port". `gidIndex`: BRAID_IB_GID_INDEX, -1 for automatic: on RoCE the first
/// RoCE v2 GID holding an IPv4 address, else the first RoCE v2 one, else index 0.
/// Errors name the variable and list what exists.
class IbDevice {
 public:
  static Result<std::unique_ptr<IbDevice>> open(const VerbsApi& api, const std::string& hca,
                                                int gidIndex, int cqEntries);
  ~IbDevice();
  IbDevice(const IbDevice&) = delete;
  IbDevice& operator=(const IbDevice&) = delete;

  const VerbsApi& api() const { return api_; }
  ibv_context* context() const { return context_; }
  ibv_pd* pd() const { return pd_; }
  ibv_cq* cq() const { return cq_; }
  ibv_comp_channel* channel() const { return channel_; }
  const PortChoice& port() const { return port_; }
  /// "rxe0 port 1 GID 3 (RoCE v2)", for logs and errors.
  std::string describe() const;

 private:
  explicit IbDevice(const VerbsApi& api) : api_(api) {}
  const VerbsApi& api_;  // the process's table (verbs_api.h), never freed
  ibv_context* context_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* channel_ = nullptr;
  ibv_cq* cq_ = nullptr;
  PortChoice port_;
};

/// The GID type sysfs gives for `device`'s `port`, entry `index` ("RoCE v2", "IB/RoCE v1"),
/// "" when sysfs does not say (older kernels, InfiniBand).
std::string gidTypeOf(const std::string& device, int port, int index);

}  // namespace braid::transport::ib
