// A CPU stand-in for CUDA streams, so the device proxy (src/comm/device_proxy/) runs in CI.
//
// A FakeStream is a host thread that runs the work enqueued on it one item at a time, in
// order, like a CUDA stream; "device memory" is ordinary host memory that only stream work
// touches. The fake keeps CUDA's rules that matter to the proxy: enqueueing never waits
// for the stream; an event is pending from its record until the stream reaches it (an
// event never recorded counts as passed); a failed item makes the stream sticky-failed, so
// later items do not run and later events report the failure, as an asynchronous CUDA
// error does. A gate lets a test hold a stream still while it queues calls, to prove that
// they return before any data has moved. Graph capture: between beginCapture and
// endCapture the stream records its work instead of running it; launching the FakeGraph
// queues that work again, once per launch, on the stream it was captured on; destroying
// the graph runs the destroy callbacks attached during capture (retainWithCapture).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "comm/device_proxy/stream_ops.h"

namespace braid::testing {

class FakeGraph;

class FakeStream {
 public:
  FakeStream();
  ~FakeStream();  // runs what is queued, then stops
  FakeStream(const FakeStream&) = delete;
  FakeStream& operator=(const FakeStream&) = delete;

  /// Queues `work`; an error from it fails the stream (what follows is skipped).
  void enqueue(std::function<Status()> work);
  /// Queues a wait until open() is called.
  void closeGate();
  void open();
  /// Waits until everything queued so far has run (or been skipped); the stream's error.
  Status synchronize();
  Status error();
  /// As the CUDA handle would be passed to braid.
  void* handle() { return this; }

  void beginCapture();
  /// The work enqueued since beginCapture, as a graph that replays it on this stream.
  std::unique_ptr<FakeGraph> endCapture();
  bool capturing();
  /// While capturing: destroy(arg) runs when the graph being captured is destroyed.
  void retainWithCapture(void (*destroy)(void*), void* arg);

 private:
  friend class FakeGraph;
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<Status()>> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  bool gateOpen_ = true;
  Status error_;
  std::unique_ptr<FakeGraph> capture_;  // non-null while capturing
  std::thread thread_;
};

class FakeGraph {
 public:
  ~FakeGraph();  // runs the destroy callbacks
  /// Queues every captured item on the stream it was captured on, in order.
  void launch();

 private:
  friend class FakeStream;
  FakeStream* stream_ = nullptr;
  std::vector<std::function<Status()>> work_;
  std::vector<std::pair<void (*)(void*), void*>> destroy_;
};

class FakeStreamOps final : public StreamOps {
 public:
  /// Makes the stream fail when it runs the `n`th device -> host copy (1 = the first).
  void failCopyToHost(int n) { failCopyToHostAt_ = n; }
  /// Allocations and events not yet freed (a leak check after shutdown).
  int liveAllocations() const { return liveAllocations_.load(); }
  int liveEvents() const { return liveEvents_.load(); }

  Result<void*> allocHost(size_t bytes) override;
  void freeHost(void* host) override;
  Result<Event> createEvent() override;
  void destroyEvent(Event event) override;
  Status copyAsync(void* dst, const void* src, size_t bytes, Direction direction,
                   void* stream) override;
  Status recordEvent(Event event, void* stream) override;
  Result<EventState> queryEvent(Event event) override;
  Status streamWaitFlag(void* stream, const uint32_t* flag, uint32_t value) override;
  Result<bool> isCapturing(void* stream) override;
  Status launchHostFunc(void* stream, HostFn fn, void* arg) override;
  Status retainWithCapture(void* stream, HostFn destroy, void* arg) override;
  Status streamWaitEvent(void* stream, Event event) override;
  Result<int> currentDevice() override { return 0; }  // one fake device
  Status useDevice(int) override { return Status::ok(); }

 private:
  std::atomic<int> copiesToHost_{0};
  std::atomic<int> failCopyToHostAt_{0};
  std::atomic<int> liveAllocations_{0};
  std::atomic<int> liveEvents_{0};
};

}  // namespace braid::testing
