// Pinned host staging slabs for the device proxy, reused once the stream is done with them.
//
// Each op queued on the proxy takes one slab: its send part is copied there from the device,
// the host collective runs on it, and its receive part is copied back. A slab is busy from
// the moment an op takes it until the stream has passed the op's `done` event (the copy back
// has finished); only then may another op write it. Until the op has recorded `done`
// (markRecorded), the event still describes the slab's previous use — or none, which CUDA
// reports as passed — so such a slab is never taken back early. Pinned allocations are slow (they
// map and lock pages), so slabs are kept and reused, best fit first, sizes rounded up to a power of
// two so ops of similar size share them. The pool grows to the number of ops in flight; shutdown
// waits for every slab's last copy before freeing it.
//
// Used from the application's thread only (the proxy thread reads slab memory but never
// takes or returns slabs).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "comm/device_proxy/stream_ops.h"
#include "core/status.h"

namespace braid {

struct StagingSlab {
  uint8_t* host = nullptr;
  size_t bytes = 0;
  StreamOps::Event ready = nullptr;  // recorded after the copy to the host
  StreamOps::Event done = nullptr;   // recorded after the copy back to the device
  bool busy = false;                 // taken, and `done` not yet seen passed
  bool doneRecorded = false;         // this use's `done` is on the stream (markRecorded)
};

class StagingPool {
 public:
  explicit StagingPool(StreamOps* ops) : ops_(ops) {}
  ~StagingPool();  // calls release()
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  /// A slab of at least `bytes` that no stream work still uses, marked busy.
  Result<StagingSlab*> acquire(size_t bytes);
  /// The op using `slab` has recorded its `done` event: from now on that event frees it.
  static void markRecorded(StagingSlab* slab) { slab->doneRecorded = true; }
  /// Waits until the stream has passed every busy slab's recorded `done` event (a stream error ends
  /// the wait: the copies will not run), then frees all memory and events.
  void release();

  size_t slabCount() const { return slabs_.size(); }

 private:
  // A slab with its memory and events, or nothing (all freed) and why.
  Result<std::unique_ptr<StagingSlab>> newSlab(size_t bytes);
  // Marks busy slabs whose `done` event has passed as free again.
  void reclaim();

  StreamOps* const ops_;
  std::vector<std::unique_ptr<StagingSlab>> slabs_;
};

}  // namespace braid
