// The mixed transport: shared memory to the peers on this rank's host, RDMA
// (the ib transport) to the peers on other hosts when every rank has an active
// RDMA port, else TCP sockets, behind one Transport — what a communicator
// spanning hosts uses unless BRAID_TRANSPORT says otherwise.
#pragma once

#include <memory>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/config.h"
#include "core/status.h"
#include "transports/connector.h"

namespace braid::transport {

/// Creates the mixed transport of `bootstrap.rank()`. `hostOfRank[r]` is the
/// host index of rank r (equal exactly when two ranks share a host; the same
/// vector on every rank). Sets up one shm transport per host (over a view of
/// the bootstrap holding that host's ranks, its shared-memory names tagged with
/// the host) and one ib or socket transport connecting only ranks on different
/// hosts. Collective: every rank of the bootstrap must call it. Uses the shm
/// and socket settings of `config` (see createShmTransport, createSocketTransport).
Result<std::unique_ptr<Transport>> createMixedTransport(Bootstrap& bootstrap, const Config& config,
                                                        const std::vector<int>& hostOfRank);

/// The name of the transport under `transport`'s connector to `peer`: "shm",
/// "ib" or "socket" for a mixed transport, transport.name() for any other; nullptr for
/// a peer out of range or this rank. For logs and tests.
const char* linkTransportName(Transport& transport, int peer);

}  // namespace braid::transport
