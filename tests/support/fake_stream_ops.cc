#include "support/fake_stream_ops.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace braid::testing {
namespace {

// An event: pending from its record until the stream reaches it.
struct FakeEvent {
  std::mutex mu;
  int recorded = 0;  // records enqueued
  int passed = 0;    // records the stream has reached
  Status error;      // the stream's failure, once it reached a record after failing
};

FakeStream* streamOf(void* stream) { return static_cast<FakeStream*>(stream); }

}  // namespace

FakeStream::FakeStream() : thread_([this] { loop(); }) {}

FakeStream::~FakeStream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    gateOpen_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void FakeStream::enqueue(std::function<Status()> work) {
  std::lock_guard<std::mutex> lock(mu_);
  if (capture_ != nullptr) {
    capture_->work_.push_back(std::move(work));
    return;
  }
  queue_.push_back(std::move(work));
  cv_.notify_all();
}

void FakeStream::beginCapture() {
  std::lock_guard<std::mutex> lock(mu_);
  capture_ = std::make_unique<FakeGraph>();
  capture_->stream_ = this;
}

std::unique_ptr<FakeGraph> FakeStream::endCapture() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(capture_);
}

bool FakeStream::capturing() {
  std::lock_guard<std::mutex> lock(mu_);
  return capture_ != nullptr;
}

void FakeStream::retainWithCapture(void (*destroy)(void*), void* arg) {
  std::lock_guard<std::mutex> lock(mu_);
  if (capture_ != nullptr) capture_->destroy_.emplace_back(destroy, arg);
}

FakeGraph::~FakeGraph() {
  for (auto& [destroy, arg] : destroy_) destroy(arg);
}

void FakeGraph::launch() {
  for (const auto& work : work_) stream_->enqueue(work);
}

void FakeStream::closeGate() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    gateOpen_ = false;
  }
  enqueue([this] {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return gateOpen_; });
    return Status::ok();
  });
}

void FakeStream::open() {
  std::lock_guard<std::mutex> lock(mu_);
  gateOpen_ = true;
  cv_.notify_all();
}

Status FakeStream::synchronize() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
  return error_;
}

Status FakeStream::error() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void FakeStream::loop() {
  while (true) {
    std::function<Status()> work;
    bool failed = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;
      work = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      failed = !error_.isOk();
    }
    // A failed stream still "runs" event records so waiters see the error; the work items
    // themselves check error() (see recordEvent), everything else is skipped.
    Status s = work();
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed && !s.isOk()) error_ = s;
    busy_ = false;
    cv_.notify_all();
  }
}

Result<void*> FakeStreamOps::allocHost(size_t bytes) {
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (p == nullptr) return internalError("fake allocHost: out of memory");
  ++liveAllocations_;
  return p;
}

void FakeStreamOps::freeHost(void* host) {
  std::free(host);
  --liveAllocations_;
}

Result<StreamOps::Event> FakeStreamOps::createEvent() {
  ++liveEvents_;
  return static_cast<Event>(new FakeEvent);
}

void FakeStreamOps::destroyEvent(Event event) {
  delete static_cast<FakeEvent*>(event);
  --liveEvents_;
}

Status FakeStreamOps::copyAsync(void* dst, const void* src, size_t bytes, Direction direction,
                                void* stream) {
  FakeStream* s = streamOf(stream);
  const bool fails = direction == Direction::kToHost && ++copiesToHost_ == failCopyToHostAt_;
  s->enqueue([s, dst, src, bytes, fails]() -> Status {
    if (!s->error().isOk()) return Status::ok();  // skipped: the stream already failed
    if (fails) return internalError("fake stream: injected failure of a device -> host copy");
    std::memcpy(dst, src, bytes);
    return Status::ok();
  });
  return Status::ok();
}

Status FakeStreamOps::recordEvent(Event event, void* stream) {
  auto* e = static_cast<FakeEvent*>(event);
  {
    std::lock_guard<std::mutex> lock(e->mu);
    ++e->recorded;
  }
  FakeStream* s = streamOf(stream);
  s->enqueue([s, e]() -> Status {
    std::lock_guard<std::mutex> lock(e->mu);
    ++e->passed;
    e->error = s->error();
    return Status::ok();
  });
  return Status::ok();
}

Result<StreamOps::EventState> FakeStreamOps::queryEvent(Event event) {
  auto* e = static_cast<FakeEvent*>(event);
  std::lock_guard<std::mutex> lock(e->mu);
  if (!e->error.isOk()) return e->error;
  return e->passed == e->recorded ? EventState::kDone : EventState::kPending;
}

Status FakeStreamOps::streamWaitFlag(void* stream, const uint32_t* flag, uint32_t value) {
  FakeStream* s = streamOf(stream);
  s->enqueue([s, flag, value]() -> Status {
    if (!s->error().isOk()) return Status::ok();
    auto reached = [&] {
      auto* word = const_cast<uint32_t*>(flag);  // atomic_ref needs a non-const object
      const uint32_t now = std::atomic_ref<uint32_t>(*word).load(std::memory_order_acquire);
      return static_cast<int32_t>(now - value) >= 0;
    };
    while (!reached()) std::this_thread::sleep_for(std::chrono::microseconds(20));
    return Status::ok();
  });
  return Status::ok();
}

Result<bool> FakeStreamOps::isCapturing(void* stream) { return streamOf(stream)->capturing(); }

Status FakeStreamOps::launchHostFunc(void* stream, HostFn fn, void* arg) {
  FakeStream* s = streamOf(stream);
  s->enqueue([s, fn, arg]() -> Status {
    if (!s->error().isOk()) return Status::ok();  // a failed stream runs nothing more
    fn(arg);
    return Status::ok();
  });
  return Status::ok();
}

Status FakeStreamOps::retainWithCapture(void* stream, HostFn destroy, void* arg) {
  FakeStream* s = streamOf(stream);
  if (!s->capturing()) return invalidUsage("fake retainWithCapture: the stream is not capturing");
  s->retainWithCapture(destroy, arg);
  return Status::ok();
}

Status FakeStreamOps::streamWaitEvent(void* stream, Event event) {
  auto* e = static_cast<FakeEvent*>(event);
  int target = 0;
  {
    std::lock_guard<std::mutex> lock(e->mu);
    target = e->recorded;  // the last record so far (none: no wait)
  }
  FakeStream* s = streamOf(stream);
  s->enqueue([s, e, target]() -> Status {
    if (!s->error().isOk()) return Status::ok();
    while (true) {
      {
        std::lock_guard<std::mutex> lock(e->mu);
        if (e->passed >= target || !e->error.isOk()) return Status::ok();
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  });
  return Status::ok();
}

}  // namespace braid::testing
