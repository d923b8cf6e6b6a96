// The TCP socket transport (DESIGN.md §4): several streams per peer,
// non-blocking sockets, epoll for waiting.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/config.h"
#include "core/status.h"
#include "transports/connector.h"

namespace braid::transport {

/// Connects this rank to every other rank of `bootstrap` over TCP, using
/// config.socketIfname (interface), config.socketStreams (connections per
/// peer; all ranks must agree), config.socketBufferBytes (SO_SNDBUF/SO_RCVBUF;
/// 0 keeps kernel autotuning) and config.timeoutSeconds (setup deadline).
/// Collective: every rank of the bootstrap must call it. `selection`, when not
/// empty, selects the peers to connect (by rank, symmetric on all ranks); the
/// connector to any other peer is null.
Result<std::unique_ptr<Transport>> createSocketTransport(Bootstrap& bootstrap, const Config& config,
                                                         std::vector<bool> selection = {});

/// The fragment size of a peer's connector over `streams` TCP streams:
/// `configured` (BRAID_SOCKET_FRAGMENT_BYTES) when not 0, else 1 MiB on a
/// single stream and 256 KiB when a message is striped over several.
size_t socketFragmentBytes(size_t configured, int streams);

}  // namespace braid::transport
