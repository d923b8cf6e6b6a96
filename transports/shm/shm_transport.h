// The shared-memory transport: ranks on one host (processes, or threads of
// one process) exchange messages through FIFOs in POSIX shared memory.
#pragma once

#include <memory>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/config.h"
#include "core/status.h"
#include "transports/connector.h"

namespace braid::transport {

/// Creates the shm transport of `bootstrap.rank()`; collective over all ranks
/// of the bootstrap, which must all run on this host. Uses config.shmSlotBytes
/// (a multiple of 64) and config.shmSlots. On return no segment name is left
/// in /dev/shm, whether setup succeeded or not. Every rank returns an error
/// when any rank failed; errors name the rank at fault. `globalRanks`, when not
/// empty, gives the communicator rank of each bootstrap rank (the bootstrap is a
/// view over some ranks of a larger communicator): errors, aborts and
/// Connector::peer() use those numbers; connector() is still indexed by bootstrap rank.
Result<std::unique_ptr<Transport>> createShmTransport(Bootstrap& bootstrap, const Config& config,
                                                      std::vector<int> globalRanks = {});

}  // namespace braid::transport
