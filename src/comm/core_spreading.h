// Spreading a host's ranks over its cores when they outnumber the cores.
//
// With more local ranks than cores (4 ranks on 2 cores), every wait in a small
// collective is a context switch, and how many switches sit on a call's
// critical path depends on which ranks share a core. Left to the scheduler,
// ranks on a loaded machine often all end up on one core (seen with
// `ps -o psr` on the 2-core VM), where a 4-rank all-reduce needs every rank
// to run in turn; spread evenly, half the exchanges cross cores and proceed in
// parallel. With BRAID_BIND=spread each rank process pins itself to one of
// the CPUs it may use: local index i takes the (i mod m)-th of its m allowed
// CPUs, so ranks fill cores round-robin and no core gets two more than another.
//
// Opt-in, because it is a trade (paired runs on the loaded 2-core VM, 4 ranks,
// shm, perf/ab with BRAID_BIND=none against spread): 8 B to 4 KiB collectives
// ran 2-2.9x faster, but 1 MiB to 128 MiB ones 1.5-17x slower. A pinned rank
// cannot leave a core that other work has taken, and big transfers need the
// CPU time more than the placement.
//
// Only when the rank is a process of its own (ranks that are threads of one
// process share the affinity of whoever calls; pinning one would pin the
// threads it starts), and once per process (a later communicator, e.g. a
// split, keeps the first placement). A failure to pin is not an error: the
// ranks still work, as the scheduler places them.
#pragma once

#include "core/status.h"

namespace braid {

/// With BRAID_BIND=spread, pins the calling process to one CPU of its affinity
/// mask when `localRanks` (this host's ranks, each its own process) exceed the
/// CPUs in that mask. `localIndex` is this rank's index among them
/// (0..localRanks-1). *pinnedCpu: the CPU pinned to, or -1 when the affinity was
/// left as it was. Fails only for a BRAID_BIND other than "spread" or "none".
Status spreadOverCores(int localIndex, int localRanks, int* pinnedCpu);

}  // namespace braid
