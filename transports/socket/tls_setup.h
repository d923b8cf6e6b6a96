// TLS on connected streams: the step after connectPeers (socket_setup.h) when
// BRAID_SOCKET_TLS=1.
//
// Every connection runs a TLS 1.3 handshake, the rank that connected (the lower) as the
// client, all connections of this rank at once from one poll() loop, so no rank waits for
// a rank that waits for it. Then each end writes, inside TLS, which rank and stream it is
// and to whom it speaks, and checks the other's: the plain hello before TLS (socket_wire.h)
// could have been rewritten by someone on the path who relays two real ranks' connections,
// and this binds each TLS session to the (rank, peer, stream) it serves.
#pragma once

#include <vector>

#include "core/deadline.h"
#include "core/net/socket_util.h"
#include "core/net/tls.h"
#include "core/status.h"

namespace braid::transport::socket {

/// Runs the handshakes on `peers` (as connectPeers returns them: by peer rank, by stream)
/// and returns one session per connection, indexed alike. A failure names the peer
/// rank. `context` must outlive the sessions.
Result<std::vector<std::vector<TlsSession>>> startTls(const TlsContext& context, int rank,
                                                      const std::vector<std::vector<Fd>>& peers,
                                                      const Deadline& deadline);

}  // namespace braid::transport::socket
