// The responder's side of the bootstrap handshake, for many connections at once.
//
// A bootstrap listener (the root's, or a rank's ring listener) can be reached by anyone
// on the network. AcceptLoop accepts every connection, sends each a fresh challenge and
// assembles its hello, all from one poll() loop, so a connection that is slow, silent,
// sends half a frame or announces a huge length only ever costs itself: it is dropped at
// its own deadline (kHandshakeSeconds) or at the first bad byte, while real ranks finish
// their handshakes around it. Only connections whose hello carries a valid MAC come out
// of next(); the others are closed without a word (they learn nothing, not even why).
//
// Bounds: at most kMaxPending handshakes are in progress; past that the oldest is dropped
// (a real rank caught in a flood of strays then fails with a clear error instead of
// waiting behind them). Every frame is capped by wire::bodyLimits().
#pragma once

#include <deque>
#include <list>
#include <string>

#include "bootstrap/handshake.h"
#include "bootstrap/tcp.h"

namespace braid::bootstrap {

/// A connection that proved the secret: its socket, the frames so far (for the answer's
/// MAC) and the hello's fields.
struct Admitted {
  Fd fd;
  Transcript transcript;
  wire::Bytes fields;
  std::string peer;  // "1.2.3.4:5678", for messages
};

class AcceptLoop {
 public:
  static constexpr double kHandshakeSeconds = 5;
  static constexpr size_t kMaxPending = 64;

  /// Serves `listenFd` (not owned; it must outlive the loop) for `protocol`, verifying
  /// hellos against `secret` (kSecretBytes, copied). `who` names this end in log lines.
  /// Each connection must complete its hello within `handshakeSeconds`.
  AcceptLoop(int listenFd, const uint8_t* secret, Protocol protocol, std::string who,
             double handshakeSeconds = kHandshakeSeconds);

  /// The next connection that proves the secret, or braidTimeout at `deadline`.
  Result<Admitted> next(const Deadline& deadline);

  /// Connections dropped so far (wrong MAC, malformed, too slow, closed); for tests/logs.
  int rejected() const { return rejected_; }

 private:
  struct Pending {
    Admitted conn;
    Deadline deadline;
    size_t challengeSent = 0;
    wire::FrameReader reader;
  };

  Status acceptNew();
  // Moves one connection's handshake forward; false: drop it (reason in *why).
  bool step(Pending& p, std::string* why);
  void drop(std::list<Pending>::iterator it, const std::string& why);

  const int listenFd_;
  uint8_t secret_[kSecretBytes];
  const Protocol protocol_;
  const std::string who_;
  const double handshakeSeconds_;
  std::list<Pending> pending_;  // oldest first
  std::deque<Admitted> ready_;
  int rejected_ = 0;
};

}  // namespace braid::bootstrap
