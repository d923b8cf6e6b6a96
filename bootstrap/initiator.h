// The initiator's side of the bootstrap handshake (handshake.h): a rank connecting to
// the root, or to its ring neighbour, runs the whole exchange on one blocking socket
// with a deadline. One connection at a time suffices here; the responder's side, which
// must not be stalled by strays, is accept_loop.h.
#pragma once

#include <string>

#include "bootstrap/handshake.h"
#include "bootstrap/tcp.h"

namespace braid::bootstrap {

/// Reads exactly one frame of `kind` from `fd` (header checked before the body is read).
Result<wire::Bytes> readFrame(int fd, wire::Kind kind, const Deadline& deadline);

/// The initiator's whole side: reads the challenge, sends a hello with `fields`, waits for
/// the answer and verifies it; returns the answer's fields. `peer` names the other end in
/// errors ("the root at 10.0.0.1:4000").
Result<wire::Bytes> initiateHandshake(int fd, const uint8_t* secret, const Protocol& protocol,
                                      wire::ByteSpan fields, const Deadline& deadline,
                                      const std::string& peer);

}  // namespace braid::bootstrap
