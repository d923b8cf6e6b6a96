#include "comm/device_proxy/proxy_registry.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "comm/device_proxy/cuda_stream_ops.h"
#include "comm/device_proxy/device_proxy.h"

namespace braid {
namespace {

std::mutex proxiesMu;
std::atomic<int> liveProxies{0};  // lets host calls skip the lock when there are none
std::map<const Comm*, std::unique_ptr<DeviceProxy>>& proxies() {
  static auto* map = new std::map<const Comm*, std::unique_ptr<DeviceProxy>>;  // exit-safe
  return *map;
}

DeviceProxy* find(const Comm* comm) {
  auto it = proxies().find(comm);
  return it == proxies().end() ? nullptr : it->second.get();
}

// Creates and registers `comm`'s proxy; the caller holds proxiesMu.
Result<DeviceProxy*> attachLocked(Comm* comm, std::shared_ptr<StreamOps> ops, size_t pieceBytes) {
  BRAID_ASSIGN_OR_RETURN(std::unique_ptr<DeviceProxy> created,
                         DeviceProxy::create(comm, std::move(ops), pieceBytes));
  DeviceProxy* proxy = created.get();
  proxies()[comm] = std::move(created);
  liveProxies.fetch_add(1, std::memory_order_release);
  return proxy;
}

// `op.comm`'s proxy, created on CUDA's StreamOps on first use.
Result<DeviceProxy*> proxyFor(const Op& op) {
  std::lock_guard<std::mutex> lock(proxiesMu);
  if (DeviceProxy* proxy = find(op.comm)) return proxy;
  Result<std::shared_ptr<StreamOps>> ops = cudaStreamOps();
  if (!ops.isOk()) {
    return invalidUsage(std::string(op.apiName) + ": a buffer is CUDA device memory, but " +
                        ops.status().message());
  }
  return attachLocked(op.comm, std::move(*ops), DeviceProxy::kDefaultPieceBytes);
}

}  // namespace

Status attachDeviceProxy(Comm* comm, std::shared_ptr<StreamOps> ops, size_t pieceBytes) {
  std::lock_guard<std::mutex> lock(proxiesMu);
  if (find(comm) != nullptr) return invalidUsage("the communicator already has a device proxy");
  return attachLocked(comm, std::move(ops), pieceBytes).status();
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
  if (liveProxies.load(std::memory_order_acquire) == 0) return;
  DeviceProxy* proxy = nullptr;
  {
    std::lock_guard<std::mutex> lock(proxiesMu);
    proxy = find(comm);
  }
  if (proxy != nullptr) proxy->waitIdle();
}

uint32_t pendingDeviceCalls(Comm* comm) {
  std::lock_guard<std::mutex> lock(proxiesMu);
  DeviceProxy* proxy = find(comm);
  return proxy != nullptr ? proxy->pending() : 0;
}

void stopDeviceProxy(Comm* comm) {
  if (liveProxies.load(std::memory_order_acquire) == 0) return;
  std::unique_ptr<DeviceProxy> stopping;
  {
    std::lock_guard<std::mutex> lock(proxiesMu);
    auto it = proxies().find(comm);
    if (it == proxies().end()) return;
    stopping = std::move(it->second);
    proxies().erase(it);
    liveProxies.fetch_sub(1, std::memory_order_release);
  }
  stopping->shutdown();  // outside the lock: it may wait for the peers and the streams
}

}  // namespace braid
