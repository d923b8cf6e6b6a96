// The bootstrap root: a short-lived listener that introduces ranks.
//
// Started by braidGetUniqueId (or by rank 0 under a launcher), it accepts one
// connection per rank, checks that each proves the secret and names a rank
// not yet taken, and when all nranks have arrived sends every rank the table
// of bootstrap listen addresses. Then it exits; the ranks talk among
// themselves from there on. Connections that do not prove the secret are
// closed and ignored, so a stray client cannot join or stall a communicator.
#pragma once

#include <cstdint>

#include "bootstrap/tcp.h"
#include "bootstrap/unique_id.h"

namespace braid::bootstrap {

/// A rank's first message to the root.
struct RootHello {
  static constexpr uint32_t kMagic = 0x484f4f52;  // "ROOH"
  uint32_t magic = kMagic;
  uint8_t secret[kSecretBytes] = {};
  int32_t rank = -1;
  int32_t nranks = 0;
  WireAddr listen;  // where this rank's bootstrap listener waits for its ring neighbour
};

/// The root's answer; on success nranks WireAddr follow it.
struct RootReply {
  int32_t code = braidSuccess;
  char message[220] = {};
};

/// Binds `address` (port 0: any free port) and serves one communicator's
/// introduction on a background thread that gives up after `timeoutSeconds`.
/// *bound receives the address ranks must connect to.
Status startRootServer(const SockAddr& address, const uint8_t (&secret)[kSecretBytes],
                       double timeoutSeconds, SockAddr* bound);

}  // namespace braid::bootstrap

namespace braid::bootstrap {

/// A fresh unique id: a new secret and a root server listening on the
/// interface pickInterface(ifname) chooses, serving for `timeoutSeconds`.
Result<UniqueId> createUniqueId(const std::string& ifname, double timeoutSeconds);

}  // namespace braid::bootstrap
