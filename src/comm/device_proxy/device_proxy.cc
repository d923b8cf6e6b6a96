#include "comm/device_proxy/device_proxy.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "comm/comm.h"
#include "comm/device_proxy/pipeline_pieces.h"
#include "comm/direct_collective.h"
#include "comm/engine.h"
#include "core/types.h"

namespace braid {
namespace {

constexpr size_t kFlagBytes = 64;       // one cache line of its own
constexpr size_t kPartAlignment = 256;  // keeps the receive part's copy aligned
constexpr int kSpinPolls = 2000;        // yields before the proxy starts to sleep
constexpr auto kPollSleep = std::chrono::microseconds(50);
// Posted mode: how often a call not yet handed over has its stream checked for failure.
constexpr auto kAnnouncedPoll = std::chrono::milliseconds(1);

// Where the send and receive parts of one op live in its slab.
struct SlabLayout {
  size_t sendOffset = 0;
  size_t recvOffset = 0;
  size_t bytes = 0;
};

// Overlapping buffers (the in-place forms) share one region so the staged op aliases as the
// application's did; separate buffers get separate parts.
SlabLayout layoutFor(const Op& op, BufferBytes bytes) {
  SlabLayout layout;
  const auto send = reinterpret_cast<uintptr_t>(op.send);
  const auto recv = reinterpret_cast<uintptr_t>(op.recv);
  const bool overlap =
      bytes.send > 0 && bytes.recv > 0 && send < recv + bytes.recv && recv < send + bytes.send;
  if (overlap) {
    const uintptr_t low = std::min(send, recv);
    layout.sendOffset = send - low;
    layout.recvOffset = recv - low;
    layout.bytes = std::max(send + bytes.send, recv + bytes.recv) - low;
    return layout;
  }
  layout.recvOffset = (bytes.send + kPartAlignment - 1) / kPartAlignment * kPartAlignment;
  layout.bytes = layout.recvOffset + bytes.recv;
  return layout;
}

}  // namespace

Result<std::unique_ptr<DeviceProxy>> DeviceProxy::create(Comm* comm, std::shared_ptr<StreamOps> ops,
                                                         size_t pieceBytes) {
  std::unique_ptr<DeviceProxy> proxy(new DeviceProxy(comm, std::move(ops), pieceBytes));
  BRAID_ASSIGN_OR_RETURN(const int device, proxy->ops_->currentDevice());
  BRAID_ASSIGN_OR_RETURN(void* flag, proxy->ops_->allocHost(kFlagBytes));
  proxy->flag_ = static_cast<uint32_t*>(flag);
  std::atomic_ref<uint32_t>(*proxy->flag_).store(0, std::memory_order_release);
  proxy->thread_ = std::thread([p = proxy.get(), device] { p->loop(device); });
  return proxy;
}

DeviceProxy::DeviceProxy(Comm* comm, std::shared_ptr<StreamOps> ops, size_t pieceBytes)
    : comm_(comm), ops_(std::move(ops)), pieceBytes_(pieceBytes), pool_(ops_.get()) {}

DeviceProxy::~DeviceProxy() { shutdown(); }

Status DeviceProxy::enqueue(const Op& op, void* stream) {
  // Every piece's copy out first, then each piece's wait and copy back: the stream copies
  // ahead while the proxy thread runs the piece before (pipeline_pieces.h).
  std::vector<Pending> items;
  for (const Op& piece : pipelinePieces(op, pieceBytes_)) {
    items.emplace_back();
    items.back().parts.push_back(Part{piece, piece, stream});
  }
  return enqueueItems(op.apiName, std::move(items));
}

Status DeviceProxy::enqueueGroup(const std::vector<Op>& ops, const std::vector<void*>& streams) {
  std::vector<Pending> items(1);
  for (size_t i = 0; i < ops.size(); ++i) {
    items[0].parts.push_back(Part{ops[i], ops[i], streams[i]});
  }
  return enqueueItems("braidGroupEnd", std::move(items));
}

Status DeviceProxy::enqueueItems(const char* apiName, std::vector<Pending> items) {
  std::lock_guard<std::mutex> order(enqueueMu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return invalidUsage(std::string(apiName) + ": the communicator is closing");
  }
  Result<bool> capturingNow = capturing(items);
  Status s = capturingNow.status();
  const bool captured = s.isOk() && *capturingNow;
  if (!captured) freeRetired();              // frees pinned memory: not while a capture records
  if (captured) s = enqueueCaptured(items);  // numbered apart: not queued below
  std::vector<bool> handedOver(items.size(), false);  // posted mode: the stream queues it
  for (size_t i = 0; i < items.size() && s.isOk() && !captured; ++i) {
    for (size_t j = 0; j < items[i].parts.size() && s.isOk(); ++j) {
      s = stageIn(&items[i].parts[j]);
    }
    if (!s.isOk()) break;  // a partly staged item is never numbered: no stream waits for it
    {
      std::lock_guard<std::mutex> lock(mu_);
      items[i].sequence = ++enqueued_;
      if (items[i].sequence == 0) items[i].sequence = ++enqueued_;  // 0 means "none"
    }
    if (posted_) {
      s = postWhenStaged(&items[i]);
      handedOver[i] = s.isOk();
    }
  }
  for (size_t i = 0; i < items.size() && s.isOk() && !captured; ++i) {
    for (size_t j = 0; j < items[i].parts.size() && s.isOk(); ++j) {
      s = stageOut(items[i].parts[j], items[i].sequence);
    }
  }
  if (!s.isOk()) {
    s = s.withContext(std::string(apiName) + " (device buffers through the host proxy)");
    comm_->fail(s);  // the peers must not wait for this rank
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < items.size(); ++i) {
    Pending& p = items[i];
    if (p.sequence == 0 || handedOver[i]) continue;  // no stream waits for it, or it comes later
    if (!s.isOk()) p.failed = s;                     // published without running
    queue_.push_back(std::move(p));
  }
  cv_.notify_all();
  return s;
}

size_t DeviceProxy::slabBytes(const Op& op) { return layoutFor(op, bufferBytes(op)).bytes; }

Status DeviceProxy::stageIn(Part* part) {
  BRAID_ASSIGN_OR_RETURN(part->slab, pool_.acquire(slabBytes(part->device)));
  return copyIn(part);
}

Status DeviceProxy::copyIn(Part* part) {
  const Op& op = part->device;
  const BufferBytes bytes = bufferBytes(op);
  const SlabLayout layout = layoutFor(op, bytes);
  uint8_t* send = part->slab->host + layout.sendOffset;
  part->staged.memory = BufferMemory::kHost;  // the host collective runs on the slab
  if (op.send != nullptr) part->staged.send = send;
  if (op.recv != nullptr) part->staged.recv = part->slab->host + layout.recvOffset;
  if (bytes.send > 0) {
    BRAID_RETURN_IF_ERROR(
        ops_->copyAsync(send, op.send, bytes.send, StreamOps::Direction::kToHost, part->stream));
  }
  if (part->slab->ready == nullptr) return Status::ok();  // a captured call's slab
  return ops_->recordEvent(part->slab->ready, part->stream);
}

Status DeviceProxy::stageOut(const Part& part, uint32_t sequence) {
  BRAID_RETURN_IF_ERROR(copyOut(part, flag_, sequence));
  BRAID_RETURN_IF_ERROR(ops_->recordEvent(part.slab->done, part.stream));
  StagingPool::markRecorded(part.slab);
  return Status::ok();
}

Status DeviceProxy::copyOut(const Part& part, const uint32_t* flag, uint32_t value) {
  const Op& op = part.device;
  const BufferBytes bytes = bufferBytes(op);
  const SlabLayout layout = layoutFor(op, bytes);
  BRAID_RETURN_IF_ERROR(ops_->streamWaitFlag(part.stream, flag, value));
  const uint8_t* staged = part.slab->host + layout.recvOffset;
  if (op.kind == OpKind::kCollective && op.coll == coll::CollKind::kAllToAllv) {
    // Only the blocks received: what lies between them is not the collective's to write.
    const size_t element = typeSize(op.type);
    for (size_t peer = 0; peer < op.recvCounts.size(); ++peer) {
      if (op.recvCounts[peer] == 0) continue;
      const size_t offset = op.recvDispls[peer] * element;
      BRAID_RETURN_IF_ERROR(ops_->copyAsync(static_cast<uint8_t*>(op.recv) + offset,
                                            staged + offset, op.recvCounts[peer] * element,
                                            StreamOps::Direction::kToDevice, part.stream));
    }
  } else if (bytes.recv > 0) {
    BRAID_RETURN_IF_ERROR(
        ops_->copyAsync(op.recv, staged, bytes.recv, StreamOps::Direction::kToDevice, part.stream));
  }
  return Status::ok();
}

void DeviceProxy::loop(int device) {
  // Without the device, every call fails (and is published): the streams still move on.
  const Status onDevice = ops_->useDevice(device);
  while (true) {
    Pending p;
    {
      std::unique_lock<std::mutex> lock(mu_);
      while (queue_.empty()) {
        if (announced_.empty()) {
          if (stopping_) return;
          cv_.wait(lock);
          continue;
        }
        // Posted mode: the next call is due from its stream. A stream that failed never
        // hands it over, so its `ready` is watched meanwhile and the call written off.
        const Announced next = announced_.front();
        lock.unlock();
        Result<StreamOps::EventState> state = ops_->queryEvent(next.ready);
        // After braidCommAbort, a stream held by the application must not hold up shutdown.
        Status writeOff = state.status().withContext("the stream of a queued device call");
        if (state.isOk() && comm_->abortRequested()) {
          writeOff = Status(braidRemoteError,
                            "braidCommAbort was called while a device call waited for its stream");
        }
        lock.lock();
        if (!writeOff.isOk() && !announced_.empty() &&
            announced_.front().sequence == next.sequence) {
          if (!state.isOk()) abandonHandover(next.handover);  // else it still runs, and frees it
          announced_.pop_front();
          Pending failed;
          failed.sequence = next.sequence;
          failed.failed = writeOff;
          queue_.push_back(std::move(failed));
        } else if (queue_.empty()) {
          cv_.wait_for(lock, kAnnouncedPoll);
        }
      }
      p = queue_.front();
    }
    Status s = !p.failed.isOk() ? p.failed : !onDevice.isOk() ? onDevice : runOne(p);
    if (!s.isOk()) comm_->fail(s);  // no-op when the host path already failed it
    publish(p);
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.pop_front();
    }
    cv_.notify_all();
  }
}

Status DeviceProxy::runOne(const Pending& p) {
  for (const Part& part : p.parts) {
    // A captured call's slab has no `ready`: its stream handed it over once staged.
    if (part.slab->ready != nullptr) BRAID_RETURN_IF_ERROR(waitReady(part.slab->ready));
  }
  BRAID_RETURN_IF_ERROR(comm_->health());  // runCollectiveDirect, unlike runOps, does not ask
  const Op& first = p.parts.front().staged;
  if (comm_->abortRequested()) {
    return Status(braidRemoteError,
                  std::string(first.apiName) + ": braidCommAbort was called before the op ran");
  }
  // The host paths themselves (submit() would wait for this very proxy to be idle).
  if (p.parts.size() == 1 && first.kind == OpKind::kCollective) return runCollectiveDirect(first);
  std::vector<Op> ops;
  ops.reserve(p.parts.size());
  for (const Part& part : p.parts) ops.push_back(part.staged);
  return runOps(ops);
}

Status DeviceProxy::waitReady(StreamOps::Event ready) {
  for (int polls = 0;; ++polls) {
    BRAID_ASSIGN_OR_RETURN(StreamOps::EventState state, ops_->queryEvent(ready));
    if (state == StreamOps::EventState::kDone) return Status::ok();
    if (comm_->abortRequested()) {
      return Status(braidRemoteError,
                    "braidCommAbort was called while an op waited for its stream");
    }
    if (polls < kSpinPolls) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(kPollSleep);
    }
  }
}

void DeviceProxy::publish(const Pending& p) {
  if (p.flag != nullptr) {  // a captured call's own flag
    std::atomic_ref<uint32_t>(*p.flag).store(p.sequence, std::memory_order_release);
    return;
  }
  // Only ever forward: a call written off out of order must not take the flag back below a
  // number a stream already passed (only this thread writes it).
  std::atomic_ref<uint32_t> flag(*flag_);
  if (static_cast<int32_t>(p.sequence - flag.load(std::memory_order_relaxed)) > 0) {
    flag.store(p.sequence, std::memory_order_release);
  }
}

void DeviceProxy::waitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return queue_.empty() && announced_.empty(); });
}

uint32_t DeviceProxy::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<uint32_t>(queue_.size() + announced_.size());
}

void DeviceProxy::shutdown() {
  std::lock_guard<std::mutex> order(enqueueMu_);
  if (shutDown_) return;
  shutDown_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  detachCaptured();  // later replays release their streams without the proxy
  pool_.release();   // waits for the streams' copies back: every flag value is published
  if (chain_ != nullptr) ops_->destroyEvent(chain_);
  chain_ = nullptr;
  if (flag_ != nullptr) ops_->freeHost(flag_);
  flag_ = nullptr;
}

}  // namespace braid
