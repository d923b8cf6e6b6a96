// The device proxy's CUDA graph capture and "posted" mode (see device_proxy.h).
//
// Why calls cannot simply be queued when they are captured: the proxy learns of an ordinary
// call when the application makes it and releases its stream with the call's sequence
// number; a graph's calls happen at every replay, after capture has returned, and a
// number fixed at capture would be published once and then pass at every later replay.
//
// So a captured call becomes a CapturedItem that the graph owns: its own slabs, and its own
// release flag. Its nodes, per replay: copy the send part into the slab; a host node that
// sets the flag to 0 and hands the item to the proxy (stream order: the copy is done); a
// wait until the flag reaches 1; the copy back. The proxy runs it like any call and
// publishes 1. Replays of one graph instance are serialised by CUDA, so one flag per item
// serves every replay. The item is freed once the graph and its instances are destroyed
// (retainWithCapture; the destroy callback may not call CUDA, so it only marks the item
// retired and the application's next call or the proxy's shutdown frees it).
//
// Order: ranks must run calls in the same order. Ordinary calls are ordered by the
// application's calls, replays by their streams, so once a communicator has captured,
// its ordinary calls are handed over by a host function as well ("posted" mode), each
// after the one before (chain_), and the proxy runs everything in the order the streams
// hand it over. A call that waits to be handed over is "announced": the proxy watches its
// `ready` event so that a failed stream, which never hands it over, still fails the call
// and the communicator instead of stalling the peers.
//
// Limits, each refused or documented in docs/CUDA.md: a captured group uses one stream;
// replays must be ordered against the communicator's other calls by the application's
// streams (as for NCCL); host-buffer calls on the communicator must not overlap a replay.
#include <algorithm>
#include <atomic>
#include <set>
#include <string>
#include <vector>

#include "comm/comm.h"
#include "comm/device_proxy/device_proxy.h"

namespace braid {
namespace {

constexpr size_t kFlagBytes = 64;

// Left by proxies that are gone, for the next proxy call on an application thread (the
// global lists keep them reachable meanwhile): captured items whose graphs were destroyed
// after their proxy shut down (a destroy callback may not call CUDA to free them), and the
// hand-overs of calls whose streams failed, which are kept, never freed (their host
// function will not run; freeing them would risk a use after free for a few bytes).
std::mutex orphansMu;
std::atomic<int> orphanCount{0};
std::vector<void*>& orphanItems() {
  static auto* items = new std::vector<void*>;
  return *items;
}
std::vector<void*>& abandonedHandovers() {
  static auto* handovers = new std::vector<void*>;
  return *handovers;
}

}  // namespace

// What host functions and graph destroy callbacks reach the proxy by; it outlives the proxy
// as long as a graph holds an item.
struct DeviceProxy::Link {
  std::mutex mu;
  DeviceProxy* proxy = nullptr;        // null once the proxy shut down
  std::set<CapturedItem*> live;        // owned; their graphs still exist
  std::vector<CapturedItem*> retired;  // owned; their graphs are gone: free on the app thread
};

struct DeviceProxy::CapturedItem {
  std::shared_ptr<Link> link;
  std::shared_ptr<StreamOps> ops;                   // frees the memory below
  Pending pending;                                  // sequence 1, flag = `flag`
  std::vector<std::unique_ptr<StagingSlab>> slabs;  // one per part, no events
  uint32_t* flag = nullptr;                         // pinned; 0 while a replay is running
};

// An ordinary call in posted mode, on its way from the stream to the proxy.
struct Handover {
  std::shared_ptr<void> link;  // DeviceProxy::Link
  void* item = nullptr;        // DeviceProxy::Pending, deleted by the host function
};

Result<bool> DeviceProxy::capturing(const std::vector<Pending>& items) {
  int captured = 0, total = 0;
  for (const Pending& item : items) {
    for (const Part& part : item.parts) {
      BRAID_ASSIGN_OR_RETURN(const bool c, ops_->isCapturing(part.stream));
      captured += c ? 1 : 0;
      ++total;
    }
  }
  if (captured != 0 && captured != total) {
    return invalidUsage(
        "a group passes streams that are being captured into a CUDA graph and streams that are "
        "not; capture all of them or none");
  }
  return captured != 0;
}

Status DeviceProxy::enqueueCaptured(const std::vector<Pending>& items) {
  if (link_ == nullptr) {
    link_ = std::make_shared<Link>();
    link_->proxy = this;
  }
  if (chain_ == nullptr) {
    BRAID_ASSIGN_OR_RETURN(chain_, ops_->createEvent());
  }
  posted_ = true;  // from now on ordinary calls are handed over in stream order too
  std::vector<const CapturedItem*> recorded;
  for (const Pending& pending : items) {
    void* stream = pending.parts.front().stream;
    for (const Part& part : pending.parts) {
      if (part.stream != stream) {
        return invalidUsage(
            "a captured group uses several streams; captured device calls through the host "
            "proxy take one stream per group");
      }
    }
    auto owned = std::make_unique<CapturedItem>();
    CapturedItem* item = owned.get();
    item->link = link_;
    item->ops = ops_;
    BRAID_ASSIGN_OR_RETURN(void* flag, ops_->allocHost(kFlagBytes));
    item->flag = static_cast<uint32_t*>(flag);
    std::atomic_ref<uint32_t>(*item->flag).store(1, std::memory_order_release);
    item->pending.parts = pending.parts;
    item->pending.sequence = 1;
    item->pending.flag = item->flag;
    Status s;
    for (Part& part : item->pending.parts) {
      auto slab = std::make_unique<StagingSlab>();
      slab->bytes = slabBytes(part.device);
      Result<void*> host = ops_->allocHost(std::max<size_t>(slab->bytes, 1));
      if (!host.isOk()) {
        s = host.status();
        break;
      }
      slab->host = static_cast<uint8_t*>(*host);
      part.slab = slab.get();
      item->slabs.push_back(std::move(slab));
    }
    // From here the graph owns the item (its nodes point into it).
    if (s.isOk()) s = ops_->retainWithCapture(stream, &DeviceProxy::retireCaptured, item);
    if (!s.isOk()) {
      for (auto& slab : item->slabs) ops_->freeHost(slab->host);
      ops_->freeHost(item->flag);
      return s;
    }
    {
      std::lock_guard<std::mutex> lock(link_->mu);
      link_->live.insert(owned.release());
    }
    for (Part& part : item->pending.parts) BRAID_RETURN_IF_ERROR(copyIn(&part));
    BRAID_RETURN_IF_ERROR(ops_->launchHostFunc(stream, &DeviceProxy::postCapturedFromStream, item));
    recorded.push_back(item);
  }
  // Every piece's copy out and hand-over first, then the waits and copies back: as for
  // ordinary calls, the copies of one piece overlap the host collective of another.
  for (const CapturedItem* item : recorded) {
    for (const Part& part : item->pending.parts) {
      BRAID_RETURN_IF_ERROR(copyOut(part, item->flag, 1));
    }
  }
  return Status::ok();
}

Status DeviceProxy::postWhenStaged(Pending* item) {
  void* stream = item->parts.front().stream;
  // The hand-over waits for every part's copy out and for the call before it.
  for (const Part& part : item->parts) {
    if (part.stream != stream) {
      BRAID_RETURN_IF_ERROR(ops_->streamWaitEvent(stream, part.slab->ready));
    }
  }
  BRAID_RETURN_IF_ERROR(ops_->streamWaitEvent(stream, chain_));
  auto* handover = new Handover{link_, new Pending(*item)};
  {
    std::lock_guard<std::mutex> lock(mu_);  // before the host function can run
    announced_.push_back(Announced{item->sequence, item->parts.front().slab->ready, handover});
  }
  Status s = ops_->launchHostFunc(stream, &DeviceProxy::postFromStream, handover);
  if (s.isOk()) s = ops_->recordEvent(chain_, stream);
  if (s.isOk()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = announced_.begin(); it != announced_.end(); ++it) {
    if (it->sequence != item->sequence) continue;
    announced_.erase(it);  // never handed over: the caller queues it as failed
    delete static_cast<Pending*>(handover->item);
    delete handover;
    break;
  }
  return s;
}

void DeviceProxy::post(Pending item) {
  std::lock_guard<std::mutex> lock(mu_);
  if (item.flag == nullptr) {
    // An ordinary call: it must still be announced (else it was written off as failed).
    auto it = announced_.begin();
    while (it != announced_.end() && it->sequence != item.sequence) ++it;
    if (it == announced_.end()) return;
    announced_.erase(it);
  } else if (stopping_) {
    // A replay while the communicator closes: released, not run.
    std::atomic_ref<uint32_t>(*item.flag).store(item.sequence, std::memory_order_release);
    return;
  }
  queue_.push_back(std::move(item));
  cv_.notify_all();
}

void DeviceProxy::postFromStream(void* arg) {
  auto* handover = static_cast<Handover*>(arg);
  auto* item = static_cast<Pending*>(handover->item);
  auto* link = static_cast<Link*>(handover->link.get());
  {
    std::lock_guard<std::mutex> lock(link->mu);
    if (link->proxy != nullptr) link->proxy->post(std::move(*item));
  }
  delete item;
  delete handover;
}

void DeviceProxy::postCapturedFromStream(void* arg) {
  auto* item = static_cast<CapturedItem*>(arg);
  std::lock_guard<std::mutex> lock(item->link->mu);
  if (item->link->proxy == nullptr) {  // the communicator is gone: release, do not run
    std::atomic_ref<uint32_t>(*item->flag).store(1, std::memory_order_release);
    return;
  }
  // Lowered before the hand-over, so the wait that follows this node holds until the
  // proxy has run this replay.
  std::atomic_ref<uint32_t>(*item->flag).store(0, std::memory_order_release);
  item->link->proxy->post(item->pending);
}

void DeviceProxy::retireCaptured(void* arg) {
  auto* item = static_cast<CapturedItem*>(arg);
  std::lock_guard<std::mutex> lock(item->link->mu);
  item->link->live.erase(item);
  if (item->link->proxy != nullptr) {
    item->link->retired.push_back(item);
    return;
  }
  std::lock_guard<std::mutex> orphans(orphansMu);
  orphanItems().push_back(item);
  orphanCount.fetch_add(1, std::memory_order_release);
}

void DeviceProxy::freeCaptured(CapturedItem* item) {
  for (auto& slab : item->slabs) item->ops->freeHost(slab->host);
  item->ops->freeHost(item->flag);
  delete item;
}

void DeviceProxy::abandonHandover(void* handover) {
  std::lock_guard<std::mutex> lock(orphansMu);
  abandonedHandovers().push_back(handover);
}

void DeviceProxy::freeRetired() {
  std::vector<void*> orphans;
  if (orphanCount.load(std::memory_order_acquire) > 0) {
    std::lock_guard<std::mutex> lock(orphansMu);
    orphans.swap(orphanItems());
    orphanCount.store(0, std::memory_order_release);
  }
  for (void* item : orphans) freeCaptured(static_cast<CapturedItem*>(item));
  if (link_ == nullptr) return;
  std::vector<CapturedItem*> retired;
  {
    std::lock_guard<std::mutex> lock(link_->mu);
    retired.swap(link_->retired);
  }
  for (CapturedItem* item : retired) freeCaptured(item);
}

void DeviceProxy::detachCaptured() {
  if (link_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(link_->mu);
    link_->proxy = nullptr;
  }
  // Items whose graphs still exist keep their memory (a replay still writes their flag);
  // retired later, they wait for another proxy's next call (their callback may not call
  // CUDA): destroy graphs before the communicator.
  freeRetired();
}

size_t DeviceProxy::capturedItems() const {
  if (link_ == nullptr) return 0;
  std::lock_guard<std::mutex> lock(link_->mu);
  return link_->live.size();
}

}  // namespace braid
