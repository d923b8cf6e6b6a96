// The TCP bootstrap network: how ranks of one communicator find each other.
//
// Join: connect to the root named by the unique id, prove the secret by
// challenge-response (handshake.h) and receive everyone's listen address in
// the root's MAC'd answer; then connect a ring (this rank -> rank+1), where
// every connection runs the handshake again, in both directions. allGather and
// barrier run around that ring (n-1 neighbour exchanges), so no rank ever
// holds more than two bootstrap connections. With `tls` (BRAID_SOCKET_TLS=1) every
// one of these connections goes on in TLS 1.3 after its hello (link.h), and the
// root refuses ranks that disagree on it, naming them.
//
// A failure of allGather or barrier cuts both ring links: the ring is out of step
// after it, and the neighbours learn at once (naming this rank) instead of at the
// deadline, so a failure on one link reaches every rank.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "bootstrap/link.h"
#include "bootstrap/tcp.h"
#include "bootstrap/unique_id.h"

namespace braid::bootstrap {

class TcpBootstrap final : public transport::Bootstrap {
 public:
  /// Joins the communicator of `id` as `rank` of `nranks`; returns when all
  /// ranks have joined, or fails at the deadline. `tagPrefix` (may be empty)
  /// starts commTag(), so a launcher can find this job's shared resources.
  static Result<std::unique_ptr<TcpBootstrap>> join(const UniqueId& id, int rank, int nranks,
                                                    double timeoutSeconds,
                                                    const std::string& tagPrefix, bool tls = false);

  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  const std::string& commTag() const override { return tag_; }
  const uint8_t* secret() const override { return transportKey_; }
  std::array<uint8_t, 32> deriveKey(std::string_view purpose) const override;
  Status allGather(void* data, size_t bytes) override;
  Status barrier() override;
  double timeoutSeconds() const override { return timeoutSeconds_; }

  /// Whether the links run TLS.
  bool tls() const { return tls_; }
  /// The socket of the link to rank + 1, for tests that write to it behind TLS's back.
  int nextFdForTesting() const { return next_.fd(); }

 private:
  TcpBootstrap(int rank, int nranks, double timeoutSeconds, bool tls)
      : rank_(rank), nranks_(nranks), timeoutSeconds_(timeoutSeconds), tls_(tls) {}
  Status connectRing(const std::vector<WireAddr>& table, Fd listener);
  Result<Link> connectNext(const WireAddr& address, int next, const Deadline& deadline) const;
  Status acceptPrev(int listener, int prev, const Deadline& deadline);

  const int rank_;
  const int nranks_;
  const double timeoutSeconds_;
  const bool tls_;
  std::string tag_;
  uint8_t secret_[kSecretBytes] = {};        // the unique id's: bootstrap handshakes only
  uint8_t transportKey_[kSecretBytes] = {};  // derived from it: what secret() hands out
  Link next_;                                // to rank + 1
  Link prev_;                                // from rank - 1
};

}  // namespace braid::bootstrap
