// Which L3 cache domain and NUMA node a rank runs in: rings and chains keep
// neighbours under one L3 (collectives/algorithms/rank_order.h), and the shm
// transport puts a rank's inbound FIFOs in its node's memory
// (transports/shm/numa_placement.h).
//
// A rank has a domain only where it cannot leave it: braid pinned it to a CPU
// (core_spreading.h), or its affinity mask lies within one L3. An unbound rank
// may run anywhere, so its domain is unknown (-1), and unknown ranks form one
// group, which leaves the order as it was.
//
// BRAID_L3_DOMAIN overrides the detection, for tests that fake a server's
// layout on a machine with one L3:
//   BRAID_L3_DOMAIN=1          this process runs in domain 1;
//   BRAID_L3_DOMAIN=0,1,0,1    rank r runs in the r-th domain listed, for
//                              tests whose ranks are threads of one process.
// Domains are numbers from 0 to 4095; a list names every rank.
//
// The NUMA node follows the same rules (the pinned CPU's node, or the one node
// an affinity mask lies in, else unknown), and BRAID_NUMA_NODE overrides it in
// the same two forms: one node for the process, or one per rank.
#pragma once

#include "core/status.h"

namespace braid {

/// The L3 domain of `rank` (of `nranks`), -1 when unknown; `pinnedCpu` is the CPU braid
/// pins the rank to, or -1. An error names BRAID_L3_DOMAIN when its value is malformed.
Result<int> rankCacheDomain(int rank, int nranks, int pinnedCpu);

/// The NUMA node of `rank`, -1 when unknown; an error names BRAID_NUMA_NODE when its value
/// is malformed. A node that the machine lacks is not an error here: the shm transport
/// then leaves its pages unbound.
Result<int> rankNumaNode(int rank, int nranks, int pinnedCpu);

}  // namespace braid
