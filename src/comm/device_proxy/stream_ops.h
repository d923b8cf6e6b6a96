// StreamOps: the few stream-ordered operations the device proxy needs, behind an interface.
//
// The proxy (device_proxy.h) moves device buffers through pinned host staging memory so the
// host collectives (shm, socket) can run on them. Everything it asks of CUDA is here: copies
// and event records enqueued on the caller's stream, a non-blocking event query for the
// proxy thread, and "make this stream wait until a host flag reaches a value". The real
// implementation lives in libbraid_cuda.so (cuda_stream_ops.h loads it); tests use a CPU
// fake whose "stream" is a host thread running its work in order, so the proxy's ordering,
// error handling and shutdown are tested without a GPU.
//
// A "stream" is opaque (a cudaStream_t for CUDA). Events are created by the StreamOps and
// only used with it. All calls but queryEvent run on the application's thread, in the
// order the application calls braid; queryEvent also runs on the proxy thread.
//
// CUDA graph capture (device_proxy_capture.cc): while a stream is being captured, copies,
// flag waits and host functions become graph nodes that run again at every replay.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace braid {

class StreamOps {
 public:
  using Event = void*;
  enum class Direction { kToHost, kToDevice };
  enum class EventState { kPending, kDone };

  virtual ~StreamOps() = default;

  /// Pinned host memory the stream's copies can use at full speed and the device can read
  /// (the flag a stream waits on lives there too). Never fails silently: error or memory.
  virtual Result<void*> allocHost(size_t bytes) = 0;
  virtual void freeHost(void* host) = 0;

  virtual Result<Event> createEvent() = 0;
  virtual void destroyEvent(Event event) = 0;

  /// Enqueues a copy of `bytes` between device memory and host staging on `stream`.
  virtual Status copyAsync(void* dst, const void* src, size_t bytes, Direction direction,
                           void* stream) = 0;
  /// Enqueues "event happens here" on `stream`.
  virtual Status recordEvent(Event event, void* stream) = 0;
  /// Whether the stream has passed `event` (never blocks); an error if the stream failed.
  virtual Result<EventState> queryEvent(Event event) = 0;
  /// Enqueues on `stream` a wait until `*flag` reaches `value`, compared as in
  /// (int32_t)(*flag - value) >= 0 so the counter may wrap. `flag` is in allocHost memory;
  /// the proxy thread raises it with a release store.
  virtual Status streamWaitFlag(void* stream, const uint32_t* flag, uint32_t value) = 0;

  using HostFn = void (*)(void* arg);
  /// Whether `stream` is being captured into a CUDA graph; an error if the capture was
  /// invalidated. StreamOps that cannot capture say false (their copies then refuse it).
  virtual Result<bool> isCapturing(void* stream) = 0;
  /// Enqueues fn(arg) on a host thread once `stream` reaches this point (captured: a host
  /// node, called at every replay). fn must return promptly and call no stream operation.
  virtual Status launchHostFunc(void* stream, HostFn fn, void* arg) = 0;
  /// While `stream` is capturing: destroy(arg) runs once the graph being captured and every
  /// instance of it are destroyed. destroy must not call CUDA (it may run on its thread).
  virtual Status retainWithCapture(void* stream, HostFn destroy, void* arg) = 0;
  /// Enqueues on `stream` a wait until the stream `event` was last recorded on passes it.
  virtual Status streamWaitEvent(void* stream, Event event) = 0;

  /// The device the calling (application) thread uses; the proxy thread adopts it with
  /// useDevice, so its event queries run in the application's context.
  virtual Result<int> currentDevice() = 0;
  virtual Status useDevice(int device) = 0;
};

}  // namespace braid
