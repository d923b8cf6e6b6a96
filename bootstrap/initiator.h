// The initiator's side of the bootstrap handshake (handshake.h): a rank connecting to
// the root, or to its ring neighbour, runs the whole exchange on one blocking socket
// with a deadline, then TLS on it when asked (link.h). One connection at a time suffices
// here; the responder's side, which must not be stalled by strays, is accept_loop.h.
#pragma once

#include <string>

#include "bootstrap/handshake.h"
#include "bootstrap/link.h"

namespace braid::bootstrap {

/// Reads exactly one frame of `kind` from `link` (header checked before the body is read).
Result<wire::Bytes> readFrame(Link& link, wire::Kind kind, const Deadline& deadline);
/// The same on a plain socket.
Result<wire::Bytes> readFrame(int fd, wire::Kind kind, const Deadline& deadline);

/// The initiator's whole side: reads the challenge, sends a hello with `fields` (which
/// carry wire::kFlagTls when `tls`), starts TLS on `link` as the client when `tls`, waits
/// for the answer and verifies it; returns the answer's fields. `peer` names the other
/// end in errors ("the root at 10.0.0.1:4000"), `peerRank` its rank where it has one.
Result<wire::Bytes> initiateHandshake(Link& link, const uint8_t* secret, const Protocol& protocol,
                                      wire::ByteSpan fields, const Deadline& deadline,
                                      const std::string& peer, bool tls = false, int peerRank = -1);

}  // namespace braid::bootstrap
