// The hooks of proxy_hooks.h over the proxy a communicator owns (comm/device_side.h).
#include "comm/device_proxy/proxy_hooks.h"

#include <memory>
#include <string>

#include "comm/comm.h"
#include "comm/device_proxy/cuda_stream_ops.h"
#include "comm/device_proxy/device_proxy.h"
#include "comm/device_side.h"

namespace braid {
namespace {

// `comm`'s proxy, or null: no lookup beyond the communicator itself.
DeviceProxy* proxyOf(const Comm* comm) {
  const DeviceSide* side = comm->deviceSide();
  return side != nullptr ? side->proxy.get() : nullptr;
}

// Creates `comm`'s proxy on `ops`.
Result<DeviceProxy*> attach(Comm* comm, std::shared_ptr<StreamOps> ops, size_t pieceBytes) {
  BRAID_ASSIGN_OR_RETURN(std::unique_ptr<DeviceProxy> created,
                         DeviceProxy::create(comm, std::move(ops), pieceBytes));
  DeviceSide& side = comm->ensureDeviceSide();
  side.proxy = std::move(created);
  return side.proxy.get();
}

// `op.comm`'s proxy, created on CUDA's StreamOps on first use.
Result<DeviceProxy*> proxyFor(const Op& op) {
  if (DeviceProxy* proxy = proxyOf(op.comm)) return proxy;
  Result<std::shared_ptr<StreamOps>> ops = cudaStreamOps();
  if (!ops.isOk()) {
    return invalidUsage(std::string(op.apiName) + ": a buffer is CUDA device memory, but " +
                        ops.status().message());
  }
  return attach(op.comm, std::move(*ops), DeviceProxy::kDefaultPieceBytes);
}

}  // namespace

Status attachDeviceProxy(Comm* comm, std::shared_ptr<StreamOps> ops, size_t pieceBytes) {
  if (proxyOf(comm) != nullptr) return invalidUsage("the communicator already has a device proxy");
  return attach(comm, std::move(ops), pieceBytes).status();
}

Status enqueueOnProxy(const Op& op, void* stream) {
  BRAID_ASSIGN_OR_RETURN(DeviceProxy * proxy, proxyFor(op));
  // A communicator is used by one thread at a time, so nothing stops the proxy meanwhile.
  return proxy->enqueue(op, stream);
}

Status enqueueGroupOnProxy(const std::vector<Op>& ops, const std::vector<void*>& streams) {
  if (ops.empty()) return Status::ok();
  BRAID_ASSIGN_OR_RETURN(DeviceProxy * proxy, proxyFor(ops.front()));
  return proxy->enqueueGroup(ops, streams);
}

void waitForDeviceProxy(Comm* comm) {
  if (DeviceProxy* proxy = proxyOf(comm)) proxy->waitIdle();
}

uint32_t pendingDeviceCalls(Comm* comm) {
  DeviceProxy* proxy = proxyOf(comm);
  return proxy != nullptr ? proxy->pending() : 0;
}

void stopDeviceProxy(Comm* comm) {
  DeviceSide* side = comm->deviceSide();
  if (side == nullptr || side->proxy == nullptr) return;
  // Taken out first: a call racing the stop finds no proxy rather than a stopping one.
  std::unique_ptr<DeviceProxy> stopping = std::move(side->proxy);
  stopping->shutdown();  // it may wait for the peers and the streams
}

}  // namespace braid
