// One bootstrap TCP connection (to the root, or between ring neighbours): a socket, and,
// when the ranks run with BRAID_SOCKET_TLS=1, TLS 1.3 on it (core/net/tls.h).
//
// TLS starts right after the hello of the challenge-response (handshake.h): the initiator
// is the client, the responder the server, and the pre-shared key is linkKey(), which only
// this connection's two ends can compute: an HMAC under the unique id's secret of the
// challenge and the hello. So
//  - nobody without the secret completes a handshake;
//  - the TLS session is bound to this connection's challenge-response: a relay that pairs
//    one connection's challenge-response with another connection's TLS fails;
//  - each connection has a key of its own (and psk_dhe_ke fresh traffic keys on top).
// Everything after the hello runs inside TLS: the root's answer with every rank's address,
// the ring's proof, and every allGather and barrier. Whether a connection goes on in TLS
// is a flag of the hello, which the MAC covers (wire::kFlagTls): an initiator and a
// responder that disagree learn it from an authenticated peer, never by guessing at bytes,
// and nobody on the path can strip TLS.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "bootstrap/handshake.h"
#include "bootstrap/tcp.h"
#include "core/net/tls.h"

namespace braid::bootstrap {

/// The pre-shared key for TLS on the connection whose challenge-response is `transcript`
/// (challenge and hello as sent).
std::array<uint8_t, 32> linkKey(const uint8_t* secret, const Transcript& transcript);

class Link {
 public:
  Link() = default;
  explicit Link(Fd fd) : fd_(std::move(fd)) {}
  Link(Link&&) = default;
  Link& operator=(Link&&) = default;

  int fd() const { return fd_.get(); }
  /// Gives up the socket (a plain link only), e.g. one the caller lent for a moment.
  int release() { return fd_.release(); }
  bool valid() const { return fd_.valid(); }
  bool tls() const { return session_.active(); }
  /// Who does the records ("" without TLS), for the log.
  const char* recordLayer() const { return session_.recordLayer(); }

  /// Runs the TLS handshake on the connected socket, as the client when `client`. A failure
  /// (a peer with another key, without TLS, or gone) names `peer`, and `peerRank` where
  /// known (-1 for the root).
  Status startTls(bool client, const std::array<uint8_t, 32>& key, const Deadline& deadline,
                  const std::string& peer, int peerRank);

  /// Exactly `bytes`, waiting until `deadline`; a peer that closes first is an error.
  Status sendAll(const void* data, size_t bytes, const Deadline& deadline);
  Status recvAll(void* data, size_t bytes, const Deadline& deadline);

  /// One non-blocking attempt each (socket_util.h's contract: 0 bytes when it would block;
  /// a send that took nothing is retried with the same bytes).
  Result<transport::socket::IoResult> sendSome(const void* data, size_t bytes);
  Result<transport::socket::IoResult> recvSome(void* data, size_t bytes);

  /// Ends the connection in both directions now (the socket stays open): the peer's next
  /// receive sees it closed, so a rank that fails takes its neighbours down with it at
  /// once instead of leaving them to wait for the deadline.
  void cut();

 private:
  Fd fd_;
  transport::socket::TlsSession session_;  // empty without TLS; holds the connection's key
};

/// Sends on one link while receiving on another, so a ring of ranks that all send before
/// they receive cannot deadlock on full socket buffers. Errors name `sendPeer` or
/// `recvPeer` (rank numbers).
Status sendRecv(Link& sendLink, int sendPeer, const void* sendData, size_t sendBytes,
                Link& recvLink, int recvPeer, void* recvData, size_t recvBytes,
                const Deadline& deadline);

}  // namespace braid::bootstrap
