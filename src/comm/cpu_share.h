// How the ranks of one host share its CPUs, judged from the affinity masks
// they bring to communicator creation (all-gathered with the other settings,
// comm.cc).
//
// One rank's own mask cannot tell. Under `mpirun` (OpenMPI binds each of up
// to two ranks to a core of its own by default) or `srun --cpu-bind=cores`,
// every rank sees a single CPU, as if all ranks were crowded onto it, while
// each in fact has a core to itself; under `taskset -c 0` for every rank,
// sysconf still counts all the machine's CPUs. So the waiting strategy
// (spin or yield, comm.cc), the placement (core_spreading.h) and the shm
// transport's block rule (single_copy.h) read the host's share instead: the
// CPUs in the union of the local ranks' masks, and whether the masks are
// pairwise disjoint, i.e. a launcher already put each rank on CPUs of its own.
// Judged from its own one-CPU mask, a rank a launcher bound to a core would
// take itself for crowded and yield at every idle poll, paying a system call
// where a short spin catches the peer's reply (perf/RESULTS.md, "Waiting").
#pragma once

#include <sched.h>

#include <vector>

namespace braid {

struct CpuShare {
  int localRanks = 1;  // this host's ranks, this one included
  int cpus = 1;        // CPUs in the union of their masks (at least 1)
  bool apart = false;  // 2+ ranks whose masks are pairwise disjoint: each has CPUs of its own

  bool oversubscribed() const { return localRanks > cpus; }
};

/// The share of the host whose ranks brought `localMasks` (one per local rank;
/// an empty mask, from a kernel that would not say, counts as unknown: then
/// no rank is taken to be apart and the union counts what is known).
CpuShare shareCpus(const std::vector<cpu_set_t>& localMasks);

}  // namespace braid
