// braidCommShrink: the survivors of a communicator build a new one without
// the ranks they exclude, even after a failure broke the old one.
//
// The old communicator's bootstrap ring and transport may be broken (a dead
// rank sat on them), so shrinking uses neither. Instead, every communicator
// opens one extra listening socket at init and publishes its address to all
// ranks (ShrinkRendezvous). To shrink:
//   1. every survivor computes the same survivor list (old ranks not excluded,
//      in old-rank order) and the same leader (the first survivor);
//   2. the leader creates a fresh unique id (new secret, new root server) and
//      accepts one connection per other survivor on its rendezvous listener;
//      each proves the old communicator's secret and the digest of the
//      excluded set, and receives the new id;
//   3. every survivor joins the new id as its index in the survivor list.
// Every wait in 2 and 3 has a deadline: BRAID_TIMEOUT (followers wait 2 s
// more for the leader, so that its verdict reaches them first), so a survivor
// that is in fact dead, or that excludes a different set, ends the shrink
// with an error naming it instead of a hang.
//
// With BRAID_SOCKET_TLS=1 every rendezvous connection runs TLS 1.3 (bootstrap/link.h)
// before its hello, keyed from the old communicator's secret: the reply carries the new
// unique id, secret and all, which must not cross the network in clear.
#pragma once

#include <memory>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "bootstrap/link.h"
#include "bootstrap/tcp.h"
#include "bootstrap/unique_id.h"
#include "comm/join_plan.h"
#include "core/status.h"

namespace braid {

class Comm;

class ShrinkRendezvous {
 public:
  /// Opens this rank's rendezvous listener on the interface `ifname` selects
  /// and learns every rank's (collective over the bootstrap). With `tls`, the
  /// rendezvous connections will run TLS (see the file comment).
  static Result<std::unique_ptr<ShrinkRendezvous>> create(transport::Bootstrap& bootstrap,
                                                          const std::string& ifname,
                                                          bool tls = false);

  /// Steps 1-2 above: returns the new communicator's id. `survivors` are old
  /// ranks in order; survivors[0] leads. `digest` identifies the excluded set.
  Result<bootstrap::UniqueId> agree(const std::vector<int>& survivors, int rank,
                                    const uint8_t* secret, uint64_t digest,
                                    const std::string& ifname, double timeoutSeconds);

 private:
  Result<bootstrap::UniqueId> lead(const std::vector<int>& survivors, const uint8_t* secret,
                                   uint64_t digest, const std::string& ifname,
                                   double timeoutSeconds);
  Result<bootstrap::UniqueId> follow(int leader, int rank, const uint8_t* secret, uint64_t digest,
                                     double timeoutSeconds);

  // TLS on a rendezvous connection, when asked for at create(); a failure names `peer`.
  Status secure(bootstrap::Link& link, bool client, const Deadline& deadline,
                const std::string& peer, int peerRank) const;

  bootstrap::Fd listener_;
  std::vector<bootstrap::WireAddr> table_;  // every old rank's rendezvous address
  bool tls_ = false;
  std::array<uint8_t, 32> tlsKey_{};  // from the old communicator's secret, when tls_
};

/// The new communicator of `comm`'s survivors (null on an excluded rank).
/// `exclude` may list ranks in any order; out-of-range ranks are an error.
Result<std::unique_ptr<Comm>> shrinkComm(Comm& comm, const std::vector<int>& exclude);
/// The agreement half of shrinkComm (steps 1-2): what this rank joins (nothing when excluded).
Result<JoinPlan> planShrink(Comm& comm, const std::vector<int>& exclude);

}  // namespace braid
