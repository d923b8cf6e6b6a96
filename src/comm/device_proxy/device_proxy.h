// The device proxy: collectives on CUDA device buffers over the host transports (shm,
// socket), for communicators without a device group (GPUs on different hosts, or ranks of
// separate processes without peer access).
//
// One proxy per communicator, with one host thread. A call enqueues on the caller's stream
// and returns (NCCL semantics), in three stream-ordered phases:
//   1. stream: copy the send buffer to a pinned host staging slab; record `ready`.
//   2. proxy thread: wait until the stream passed `ready`, run the ordinary host collective
//      on the staging slab (the same schedules and transports as host memory), then raise
//      the communicator's flag to the op's sequence number (release store).
//   3. stream: wait until the flag reaches the sequence number; copy the receive part of
//      the slab to the receive buffer; record `done` (the slab is free after it).
// Invariants: the proxy runs ops in call order (one FIFO per communicator), so one flag
// per communicator, raised to each op's number in turn, releases every stream; every op's
// number is raised exactly once whatever happens to it (run, failed, aborted), so no
// stream ever waits forever on the proxy. A failure (a host collective, a stream error)
// marks the communicator failed, which tells every peer: later ops on it fail fast and the
// error surfaces on the next call and through braidCommGetAsyncError on every rank.
//
// Large all-reduce, reduce and broadcast calls are cut into pieces queued as consecutive
// calls, so copies overlap the host collective (pipeline_pieces.h).
//
// Groups (braidGroupStart/End: sends, receives, collectives on one communicator) are one
// queued item of several parts: each part is staged on its own stream (its own slab and
// `ready`), the proxy waits for every part's `ready`, runs them together as the host path runs
// a group (so a send and the matching receive never wait for each other), and one sequence
// number releases every part's stream.
//
// CUDA graph capture (device_proxy_capture.cc): a call on a capturing stream becomes a
// replayable item that a host node hands to the proxy at every replay, with a release flag
// of its own. From the first capture on, this communicator's ordinary calls are handed
// over by a host function too, when their stream reaches them ("posted" mode), so the
// proxy sees replays and calls in stream order, the same order on every rank.
//
// In place: when the buffers overlap (the same buffer, or one inside the other), the slab
// mirrors their union and each part sits at its offset, so the host collective sees the
// same aliasing the application passed.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/device_proxy/staging_pool.h"
#include "comm/device_proxy/stream_ops.h"
#include "comm/op.h"
#include "core/status.h"

namespace braid {

class Comm;

class DeviceProxy {
 public:
  /// Large elementwise calls are cut into pieces of this size and pipelined: the stream's
  /// copies overlap the host collective of the piece before. At PCIe 4 x16's ~25 GB/s a
  /// 4 MiB piece copies in ~0.17 ms, long against the per-piece overheads (a few µs).
  static constexpr size_t kDefaultPieceBytes = size_t{4} << 20;

  /// A proxy for `comm` (which must outlive it) using `ops`; starts its thread.
  static Result<std::unique_ptr<DeviceProxy>> create(Comm* comm, std::shared_ptr<StreamOps> ops,
                                                     size_t pieceBytes = kDefaultPieceBytes);
  ~DeviceProxy();  // shutdown()
  DeviceProxy(const DeviceProxy&) = delete;
  DeviceProxy& operator=(const DeviceProxy&) = delete;

  /// Enqueues the validated collective or send/recv `op` (device buffers) on `stream`;
  /// returns once the stream work is queued. Errors here also fail the communicator (the
  /// peers must learn).
  Status enqueue(const Op& op, void* stream);

  /// Enqueues the validated ops of one group (all on this communicator; ops[i] on
  /// streams[i]) as one item the proxy runs together; as enqueue() otherwise.
  Status enqueueGroup(const std::vector<Op>& ops, const std::vector<void*>& streams);

  /// Blocks until the proxy thread has finished every op enqueued so far (run or failed).
  /// Host calls on the communicator wait here, so they never share the transport with it.
  void waitIdle();

  /// Runs (or, once braidCommAbort was called, fails) every queued op, stops the thread,
  /// waits for the streams' copies back and frees the staging memory. Idempotent.
  void shutdown();

  /// Ops enqueued and not yet finished by the proxy thread.
  uint32_t pending() const;

  /// Items of captured graphs still held (their graphs not yet destroyed); for tests.
  size_t capturedItems() const;

 private:
  // One op of a queued item, on its stream.
  struct Part {
    Op device;  // as the application passed it
    Op staged;  // buffers point into the slab
    void* stream = nullptr;
    StagingSlab* slab = nullptr;
  };
  // What the proxy thread runs at once: one call, one piece of a call, or one group.
  struct Pending {
    std::vector<Part> parts;
    uint32_t sequence = 0;     // the flag value that releases its streams; 0 = none
    uint32_t* flag = nullptr;  // where `sequence` is published; null: the communicator's
    Status failed;             // set when its enqueue failed half way: published without running
  };
  // Posted mode: a call whose stream has yet to hand it over.
  struct Announced {
    uint32_t sequence = 0;
    StreamOps::Event ready = nullptr;  // its first part's: shows a failed stream
    void* handover = nullptr;          // what its host function frees (device_proxy_capture.cc)
  };
  struct Link;          // device_proxy_capture.cc: what host functions reach the proxy by
  struct CapturedItem;  // device_proxy_capture.cc: one call of a captured graph

  DeviceProxy(Comm* comm, std::shared_ptr<StreamOps> ops, size_t pieceBytes);
  // Stages `items` (parts' device and stream set) and queues them; `apiName` for errors.
  Status enqueueItems(const char* apiName, std::vector<Pending> items);
  // Bytes of the slab `op` is staged in.
  static size_t slabBytes(const Op& op);
  // Phase 1 of one part: slab, copy out, `ready`.
  Status stageIn(Part* part);
  // Phase 1 on the part's slab: points the staged op into it, copies out, records `ready`.
  Status copyIn(Part* part);
  // Phase 3 of one part: wait for the item's number, copy back, `done`.
  Status stageOut(const Part& part, uint32_t sequence);
  // Phase 3 without the `done` record: wait until *flag reaches `value`, copy back.
  Status copyOut(const Part& part, const uint32_t* flag, uint32_t value);
  void loop(int device);
  Status runOne(const Pending& p);
  Status waitReady(StreamOps::Event ready);
  void publish(const Pending& p);

  // device_proxy_capture.cc.
  // Whether the items' streams are being captured (all or none; else an error).
  Result<bool> capturing(const std::vector<Pending>& items);
  // Records `items` into the graph being captured on their stream.
  Status enqueueCaptured(const std::vector<Pending>& items);
  // Posted mode: item i's streams hand it over by a host function once staged.
  Status postWhenStaged(Pending* item);
  // Queues `item` for the proxy thread (a host function, at stream time).
  void post(Pending item);
  // Frees captured items whose graphs were destroyed (application thread).
  void freeRetired();
  // At shutdown: captured items replayed later release their streams on their own.
  void detachCaptured();
  static void postFromStream(void* arg);
  static void postCapturedFromStream(void* arg);
  static void retireCaptured(void* arg);
  static void freeCaptured(CapturedItem* item);
  // A call written off because its stream failed: that stream never runs its host function.
  static void abandonHandover(void* handover);

  Comm* const comm_;
  const std::shared_ptr<StreamOps> ops_;
  const size_t pieceBytes_;
  StagingPool pool_;
  uint32_t* flag_ = nullptr;  // pinned, device-visible; written by the proxy thread only

  std::mutex enqueueMu_;  // one enqueue or shutdown at a time; guards pool_, shutDown_,
                          // posted_ and chain_
  bool shutDown_ = false;
  bool posted_ = false;  // since the first capture: calls are handed over at stream time
  StreamOps::Event chain_ = nullptr;  // posted mode: each hand-over follows the one before
  std::shared_ptr<Link> link_;        // shared with captured items, which may outlive this

  mutable std::mutex mu_;  // guards what the proxy thread shares
  std::condition_variable cv_;
  std::deque<Pending> queue_;        // the front is the op the proxy thread is running
  std::deque<Announced> announced_;  // posted mode: enqueued, not yet handed over, in order
  uint32_t enqueued_ = 0;            // last sequence handed out
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace braid
