// The bootstrap handshake: mutual challenge-response over one TCP connection, so that
// the communicator's secret never crosses the wire and both ends learn the other knows it.
//
//   responder -> initiator  challenge  {nonce_r}
//   initiator -> responder  hello      {nonce_i, fields, mac_i}
//   responder -> initiator  answer     {fields, mac_r}
//
//   mac_i = HMAC-SHA256(secret, "braid bootstrap hello"  | challenge | hello without mac_i)
//   mac_r = HMAC-SHA256(secret, "braid bootstrap answer" | challenge | hello | answer without
//   mac_r)
//
// Each MAC covers every byte exchanged before it, both nonces included, so:
//  - a connection without the secret cannot produce mac_i and is dropped unanswered;
//  - a recorded hello replayed on a new connection fails (fresh nonce_r), and a recorded
//    answer fed to a new initiator fails (fresh nonce_i);
//  - the labels and frame kinds differ per direction and per protocol (root or ring), so a
//    MAC from one place is never valid in another (no reflection).
// The root uses this with its reply (the rank table) as the answer; ring neighbours use it
// with an empty proof. Frames are wire.h's; this file adds the MACs, as pure functions
// (unit-tested and fuzzed without sockets). The initiator's blocking I/O is initiator.h;
// the responder's side, which must serve many connections at once, is accept_loop.h.
#pragma once

#include <string>
#include <string_view>

#include "bootstrap/crypto.h"
#include "bootstrap/unique_id.h"
#include "bootstrap/wire.h"

namespace braid::bootstrap {

/// The three frame kinds of one use of the handshake.
struct Protocol {
  wire::Kind challenge;
  wire::Kind hello;
  wire::Kind answer;
};
constexpr Protocol kRootProtocol{wire::Kind::kRootChallenge, wire::Kind::kRootHello,
                                 wire::Kind::kRootReply};
constexpr Protocol kRingProtocol{wire::Kind::kRingChallenge, wire::Kind::kRingHello,
                                 wire::Kind::kRingProof};

/// The frames of one handshake so far, as sent; the MACs cover them.
struct Transcript {
  wire::Bytes challenge;
  wire::Bytes hello;
};

/// A value only holders of `secret` can compute, for one `purpose` ("braid comm tag"):
/// HMAC-SHA256(secret, purpose). What the bootstrap hands to others (the communicator's tag,
/// the transports' key) is derived this way, so the unique id's secret itself never
/// leaves the bootstrap, not even in part.
Digest deriveFromSecret(const uint8_t* secret, std::string_view purpose);

// Pure steps (no I/O), shared by both sides, the unit tests and the fuzz targets.

/// The responder's challenge carrying `nonce` (kNonceBytes).
wire::Bytes makeChallenge(const Protocol& protocol, const uint8_t* nonce);
/// The initiator's hello answering `challenge`: nonce, fields, MAC.
wire::Bytes makeHello(const uint8_t* secret, const Protocol& protocol, const wire::Bytes& challenge,
                      const uint8_t* nonce, wire::ByteSpan fields);
/// Checks both frames of the transcript and the hello's MAC; returns the hello's fields
/// (between nonce and MAC).
Result<wire::Bytes> verifyHello(const uint8_t* secret, const Protocol& protocol,
                                const Transcript& transcript);
/// The responder's answer to a verified hello: fields, MAC.
wire::Bytes makeAnswer(const uint8_t* secret, const Protocol& protocol,
                       const Transcript& transcript, wire::ByteSpan fields);
/// Checks the answer frame and its MAC; returns its fields.
Result<wire::Bytes> verifyAnswer(const uint8_t* secret, const Protocol& protocol,
                                 const Transcript& transcript, const wire::Bytes& answer);

}  // namespace braid::bootstrap
