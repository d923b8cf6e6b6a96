// Placing a host's rank processes on its cores when they fill or outnumber them.
//
// Left to the scheduler, waiting ranks look idle, and the kernel may pack
// them onto one CPU (OpenMPI's ranks too). Every wait then is a context
// switch, which costs more than a small call's transfer (perf/RESULTS.md,
// "Placement"). Pinned round-robin (local index i
// takes the (i mod m)-th of its m allowed CPUs), half the exchanges of 4 ranks
// cross cores and proceed in parallel, and 2 ranks each keep a core. Pinning
// once and releasing does not hold: the kernel packs the ranks again within a
// second.
//
// Pinning is a trade, so by default (BRAID_BIND=auto) it follows the calls:
// a rank thread is pinned once kSmallCallsBeforePinning latency-bound calls
// (this rank's larger buffer <= kPinnedCallMaxBytes, or
// kOwnCorePinnedCallMaxBytes when each rank has a CPU of its own) ran in a
// row, and gets its own affinity back at the first larger call. Pinned ranks
// win small calls but lose larger ones (perf/RESULTS.md, "Placement"):
// mid-size calls keep their data in one core's cache when the ranks are
// packed, and a pinned rank cannot leave a core that other work took.
// The run of small calls keeps a benchmark's barrier before each large call
// from pinning and releasing every call, and each switch of the placement
// costs the large call after it.
// BRAID_BIND=spread pins for every call, none never does.
//
// Only when the rank is a process of its own (ranks that are threads of one
// process share the affinity of whoever calls), and decided once per process
// (a later communicator, e.g. a split, keeps the first decision). A failure
// to pin is not an error: the ranks still work, as the scheduler places them.
#pragma once

#include <sched.h>

#include <cstddef>

#include "core/status.h"

namespace braid {

enum class BindMode { kAuto, kSpread, kNone };

/// The largest call (bytes of this rank's larger buffer) that BRAID_BIND=auto
/// runs pinned when ranks share CPUs (more ranks than CPUs).
inline constexpr size_t kPinnedCallMaxBytes = size_t{8} << 10;

/// The same when each rank has a CPU of its own: packed onto one CPU, two
/// ranks also lose at mid sizes, while past the caches pinning costs more
/// than it saves (perf/RESULTS.md, "Placement").
inline constexpr size_t kOwnCorePinnedCallMaxBytes = size_t{2} << 20;

/// BRAID_BIND: unset, "" or "auto" -> kAuto; "spread"; "none". Anything else
/// is an error naming the value.
Status readBindMode(BindMode* mode);

/// Consecutive small calls after which BRAID_BIND=auto pins a thread.
inline constexpr int kSmallCallsBeforePinning = 16;

/// Whether the next call, moving `callBytes` (this rank's larger buffer), runs
/// pinned, where auto pins calls up to `maxPinnedBytes` (a small call).
/// *smallRun counts the thread's consecutive small calls (start at 0): auto
/// pins once kSmallCallsBeforePinning of them ran in a row and releases at the
/// first large call, so a barrier between large calls does not pin.
/// Inline: every call asks it.
inline bool pinsNextCall(BindMode mode, size_t callBytes, size_t maxPinnedBytes, int* smallRun) {
  switch (mode) {
    case BindMode::kAuto:
      if (callBytes > maxPinnedBytes) {
        *smallRun = 0;
        return false;
      }
      if (*smallRun < kSmallCallsBeforePinning) ++*smallRun;
      return *smallRun >= kSmallCallsBeforePinning;
    case BindMode::kSpread:
      return true;
    case BindMode::kNone:
      return false;
  }
  return false;
}

/// The CPU that local index `localIndex` of `localRanks` takes among the
/// `allowedCpus` (ascending): the (localIndex mod m)-th of the m; -1 for a
/// single rank, ranks fewer than the CPUs, or an index out of range.
int spreadCpu(const int* allowedCpus, int cpuCount, int localIndex, int localRanks);

/// Decides this process's placement once, from BRAID_BIND and the calling
/// thread's affinity: a CPU when `localRanks` (this host's ranks, each its own
/// process; at least 2) fill or exceed the CPUs in that mask. With
/// BRAID_BIND=spread it pins the calling thread at once. *pinnedCpu: the CPU pinned to now, or -1.
/// Fails only for a BRAID_BIND other than "auto", "spread" or "none".
Status spreadOverCores(int localIndex, int localRanks, int* pinnedCpu);

/// Before a call moving `callBytes`: pins the calling thread to this process's
/// CPU or gives it back the affinity found at spreadOverCores, as pinsNextCall
/// says. Does nothing when no placement was decided (fewer ranks than CPUs,
/// ranks that are threads, BRAID_BIND=none) or when the thread is already
/// placed so.
void placeForCall(size_t callBytes);

/// The CPUs this process may use: the affinity found when the placement was
/// decided (pinning must not make a later communicator think it has one CPU),
/// else the calling thread's affinity now; empty when the kernel will not say.
cpu_set_t usableCpus();

/// True while the calling thread is pinned to a CPU that no other rank of
/// this host was given (the ranks do not outnumber the CPUs).
bool pinnedToOwnCore();

}  // namespace braid
