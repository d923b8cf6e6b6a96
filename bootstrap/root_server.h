// The bootstrap root: a short-lived listener that introduces ranks.
//
// Started by braidGetUniqueId (or by rank 0 under a launcher), it accepts one
// connection per rank, runs the challenge-response handshake with each
// (handshake.h, root protocol), checks that each names a rank not yet taken,
// and when all nranks have arrived answers every rank with the table of ring
// listen addresses, MAC'd so the rank knows the root is genuine. Then it exits;
// the ranks talk among themselves from there on. Connections that do not prove
// the secret are dropped unanswered by AcceptLoop, concurrently with real
// ranks' handshakes, so a stray client can neither join nor stall a communicator.
#pragma once

#include <cstdint>

#include "bootstrap/tcp.h"
#include "bootstrap/unique_id.h"

namespace braid::bootstrap {

/// Binds `address` (port 0: any free port) and serves one communicator's
/// introduction on a background thread that gives up after `timeoutSeconds`.
/// *bound receives the address ranks must connect to.
Status startRootServer(const SockAddr& address, const uint8_t (&secret)[kSecretBytes],
                       double timeoutSeconds, SockAddr* bound);

/// The same on `listenFd`, a socket already listening on the root's port, which the
/// server takes over. Fails, leaving the descriptor alone, unless it is a listening
/// socket on `port`.
Status startRootServerOn(int listenFd, int port, const uint8_t (&secret)[kSecretBytes],
                         double timeoutSeconds);

}  // namespace braid::bootstrap

namespace braid::bootstrap {

/// A fresh unique id: a new secret and a root server listening on the
/// interface pickInterface(ifname) chooses, serving for `timeoutSeconds`.
Result<UniqueId> createUniqueId(const std::string& ifname, double timeoutSeconds);

}  // namespace braid::bootstrap
