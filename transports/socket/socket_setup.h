// Connection setup for the socket transport: from a bootstrap to `streams`
// authenticated TCP connections per peer.
#pragma once

#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/deadline.h"
#include "core/net/socket_util.h"
#include "core/status.h"

namespace braid::transport::socket {

struct SetupOptions {
  std::string ifname;  // BRAID_SOCKET_IFNAME spec (see selectInterface)
  int streams = 1;     // connections per peer, 0: streamsFor decides; the same on every rank
  SocketOptions socketOptions;
  int32_t tls = 0;  // a TlsMode (socket_wire.h); the same on every rank
  // A failure this rank met before setup (e.g. an unreadable certificate): it still takes
  // part in the address exchange, so the others fail at once instead of timing out.
  Status localFailure;
  Deadline deadline;
  // Which peers to connect, by rank; empty: all. Must be symmetric (p connects q
  // exactly when q connects p), e.g. "on another host" for the mixed transport.
  std::vector<bool> peers;
};

/// Connections per peer for `requested` (BRAID_SOCKET_NSTREAMS; 0: automatic) when the
/// ranks listen on `addresses`. Automatic is one stream when every rank listens on the
/// same IP address (one host: loopback TCP gains nothing from more, see socket_setup.cc),
/// else kStreamsAcrossHosts. Every rank computes the same from the same addresses.
constexpr int kStreamsAcrossHosts = 2;
int streamsFor(int requested, const std::vector<SocketAddress>& addresses);

/// Connects this rank to every other rank (or to those options.peers selects).
/// Returns, indexed by peer rank, `options.streams` connected non-blocking
/// sockets ordered by stream index (an empty vector for this rank and for peers
/// not selected). Collective: every rank must call it.
Result<std::vector<std::vector<Fd>>> connectPeers(Bootstrap& bootstrap,
                                                  const SetupOptions& options);

}  // namespace braid::transport::socket
