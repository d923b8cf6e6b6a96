// The TCP bootstrap network: how ranks of one communicator find each other.
//
// Join: connect to the root named by the unique id, prove the secret by
// challenge-response (handshake.h) and receive everyone's listen address in
// the root's MAC'd answer; then connect a ring (this rank -> rank+1), where
// every connection runs the handshake again, in both directions. allGather and
// barrier run around that ring (n-1 neighbour exchanges), so no rank ever
// holds more than two bootstrap connections.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
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
                                                    const std::string& tagPrefix);

  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  const std::string& commTag() const override { return tag_; }
  const uint8_t* secret() const override { return transportKey_; }
  std::array<uint8_t, 32> deriveKey(std::string_view purpose) const override;
  Status allGather(void* data, size_t bytes) override;
  Status barrier() override;
  double timeoutSeconds() const override { return timeoutSeconds_; }

 private:
  TcpBootstrap(int rank, int nranks, double timeoutSeconds)
      : rank_(rank), nranks_(nranks), timeoutSeconds_(timeoutSeconds) {}
  Status connectRing(const std::vector<WireAddr>& table, Fd listener);
  Result<Fd> connectNext(const WireAddr& address, int next, const Deadline& deadline) const;
  Status acceptPrev(int listener, int prev, const Deadline& deadline);

  const int rank_;
  const int nranks_;
  const double timeoutSeconds_;
  std::string tag_;
  uint8_t secret_[kSecretBytes] = {};        // the unique id's: bootstrap handshakes only
  uint8_t transportKey_[kSecretBytes] = {};  // derived from it: what secret() hands out
  Fd next_;                                  // to rank + 1
  Fd prev_;                                  // from rank - 1
};

}  // namespace braid::bootstrap
