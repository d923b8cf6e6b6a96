// The ibverbs transport: RDMA over InfiniBand or RoCE (DESIGN.md §4), one
// reliable-connected queue pair per peer, libibverbs loaded at run time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/config.h"
#include "core/status.h"
#include "transports/connector.h"

namespace braid::transport {

/// Connects this rank to every other rank of `bootstrap` over RDMA, using
/// config.ibHca (BRAID_IB_HCA), config.ibGidIndex (BRAID_IB_GID_INDEX) and
/// config.timeoutSeconds. Collective: every rank must call it; when any rank
/// cannot (no libibverbs, no device, no active port, a bad variable) every rank
/// returns an error naming that rank and why. `selection`, when not empty,
/// selects the peers to connect (by rank, symmetric); other connectors are null.
Result<std::unique_ptr<Transport>> createIbTransport(Bootstrap& bootstrap, const Config& config,
                                                     std::vector<bool> selection = {});

/// Whether this process could open an RDMA port with `config`'s settings: empty when
/// yes, else why not. For the mixed transport's choice between ib and TCP.
std::string ibUnavailableReason(const Config& config);

}  // namespace braid::transport
