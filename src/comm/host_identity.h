// Host identity: which ranks share a machine, for "same host" decisions.
//
// Ranks on one host can use shared memory and should keep traffic local; the
// hierarchical algorithms (collectives/algorithms/hierarchical.h) and the
// transport choice both start from this. A host is one kernel boot (hostname
// + boot_id) *and* one network namespace: namespaces that share a kernel and
// /dev/shm still have their own links, which is how tests/multihost builds
// several "hosts" on one machine.
//
// BRAID_HOST_ID overrides the detection, for tests that fake hosts:
//   BRAID_HOST_ID=a          this process is on host "a";
//   BRAID_HOST_ID=a,a,b,b    rank r (in the communicator being created) is on
//                            the r-th host named, for tests whose ranks are
//                            threads of one process. A list must name every rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace braid {

/// A 64-bit identity of the host of `rank` (of `nranks`): equal on two ranks exactly
/// when they share a host. An error names BRAID_HOST_ID when its list is malformed.
Result<uint64_t> hostIdentity(int rank, int nranks);

/// A 64-bit identity of the kernel this process runs on (hostname + boot id): ranks
/// with equal identities share CPUs, even when they are different hosts above (network
/// namespaces, BRAID_HOST_ID). Decisions about CPU sharing (spinning) use this one.
uint64_t machineIdentity();

/// The host index of every rank, given every rank's identity: hosts are numbered
/// 0, 1, ... in the order of their lowest rank, so every rank computes the same map.
std::vector<int> hostIndices(const std::vector<uint64_t>& identities);

}  // namespace braid
