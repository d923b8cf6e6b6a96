// Whether the two ranks of an shm link currently sit far apart on the host, told from how
// long the sender's copies into the FIFO's slots take.
//
// A FIFO slot's lines move between the two ranks' caches twice per use (the sender's write
// takes them from the receiver's cache, the receiver's read takes them back). Under one L3
// that costs little, and the two-copy FIFO beats a single CMA copy at mid and large sizes.
// Across L3 domains (another CCX or socket, or vCPUs the hypervisor has placed apart) every
// such transfer crosses the interconnect: the FIFO then runs several times slower than a
// single copy that reads the sender's buffer once (perf/RESULTS.md, "Far placement"). The
// placement can change while a job runs (a VM's vCPUs move), so it is measured, not assumed.
//
// The measure: the sender times each copy of at least kTimedBytes into a slot with the time
// stamp counter, as ticks per 64 KiB, against a reference: the same copy between two private
// buffers, the fastest of those timed at setup and again every kRecalibrateEvery timed
// messages (a copy timed while the other hyperthread of the core was busy runs up to twice
// as long; the minimum over several moments is the core's own speed). A message's timed
// fragments are summed into units of kUnitBytes, and its pace is that of its fastest unit (a
// preemption or a page fault only slows a unit down). Judging units rather than fragments
// matters for small fragments (fifo.h): far apart, one of a message's 32 KiB fragments often
// copies fast while the others crawl, and the fastest fragment alone would keep the link near. The
// link counts as far after kFarMessages messages in a row whose pace is above kFarRatio times the
// reference, and as near again after one message under it. Copies from a buffer that is not in
// cache run a few times slower than the reference too, so the ratio leaves room for them.
//
// While far, ShmConnector sends messages of at least kFarSingleCopyBytes single-copy where
// the link allows it, except every kProbeEvery-th one, which takes the FIFO to measure again.
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid::transport::shm {

class CopyPace {
 public:
  static constexpr size_t kTimedBytes = size_t{16} << 10;
  static constexpr size_t kUnitBytes = size_t{128} << 10;
  static constexpr double kFarRatio = 10.0;
  static constexpr int kFarMessages = 2;
  static constexpr int kProbeEvery = 64;
  static constexpr size_t kFarSingleCopyBytes = size_t{64} << 10;
  static constexpr int kRecalibrateEvery = 256;

  /// Times the reference copy; BRAID_SHM_TEST_PACE=far or near (a test hook) fixes the verdict.
  CopyPace();
  /// A pace with the given reference (ticks per 64 KiB) that is never timed again, for tests.
  explicit CopyPace(double referenceTicks) : referenceTicks_(referenceTicks), fixed_(true) {}

  /// The time stamp counter; 0 where there is none (then the link never counts as far).
  static uint64_t now();

  /// One fragment of `bytes` copied into a slot in `ticks`; fragments below kTimedBytes and
  /// zero readings are ignored. A unit is judged once it holds kUnitBytes.
  void recordFragment(size_t bytes, uint64_t ticks);
  /// The message whose fragments were recorded is in the FIFO; a message with no timed
  /// fragment leaves the verdict as it was.
  void endMessage();

  bool far() const { return forced_ != 0 ? forced_ > 0 : far_; }
  /// Asked once per message that would go single-copy because the link is far: true for
  /// every kProbeEvery-th, which should take the FIFO instead.
  bool probeDue() { return forced_ == 0 && ++farSends_ % kProbeEvery == 0; }

  double referenceTicks() const { return referenceTicks_; }

 private:
  double referenceTicks_ = 0;  // a private 64 KiB copy; 0: no counter
  void judgeUnit();
  double messagePace_ = 0;  // fastest unit of the current message; 0: none
  uint64_t unitBytes_ = 0;  // the current unit's timed fragments so far
  uint64_t unitTicks_ = 0;
  int slowMessages_ = 0;  // slow messages in a row
  bool far_ = false;
  bool fixed_ = false;  // the reference came from a test
  uint64_t timedMessages_ = 0;
  int forced_ = 0;  // BRAID_SHM_TEST_PACE: 1 far, -1 near, 0 measured
  uint64_t farSends_ = 0;
};

}  // namespace braid::transport::shm
