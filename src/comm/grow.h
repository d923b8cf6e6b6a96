// braidCommGrow: new ranks join a live communicator (elastic training).
//
// One rank of the communicator, the coordinator, makes a grow id (braidCommGetUniqueId): a
// fresh unique id (new secret, new bootstrap root) with a trailer that records the
// communicator's size, so a new rank can check its own arguments before it connects. Then:
//   1. the existing ranks exchange, over their bootstrap, the nRanks each passes and whether
//      it passes the id (only the coordinator does); all apply the same checks to the same
//      table, so they fail together, naming the rank at fault, or all learn the id;
//   2. every rank, old and new, joins the id: existing ranks keep their rank, new ranks take
//      count..nRanks-1.
// The root's deadline started when the id was made; when a new rank never comes, the root
// answers every rank that came with the missing ranks' numbers, before their own deadlines.
#pragma once

#include <mutex>
#include <optional>

#include "bootstrap/unique_id.h"
#include "braid.h"
#include "comm/join_plan.h"
#include "core/status.h"

namespace braid {

class Comm;

/// The grow id a communicator's coordinator has handed out and not yet used (thread-safe).
class GrowIds {
 public:
  /// A new grow id for a communicator of `nranks`; braidInvalidUsage while one is unused.
  Result<braidUniqueId> create(int nranks, const std::string& ifname, double timeoutSeconds);
  /// Whether `id` is the unused id of create().
  bool isPending(const braidUniqueId& id) const;
  /// Marks the pending id used (a grow is joining it).
  void consume();

 private:
  mutable std::mutex mu_;
  std::optional<braidUniqueId> pending_;
};

/// Phase 1 for an existing rank of `comm`: `id` is the coordinator's id, NULL elsewhere.
/// `local` is the verdict of the caller's own argument checks: an error still takes part
/// in the exchange (so the other ranks fail at once, naming this one) and is returned.
Result<JoinPlan> planGrow(Comm& comm, int nRanks, const braidUniqueId* id, Status local);

/// The plan of a new rank: checks `rank` and `nRanks` against the id's trailer.
Result<JoinPlan> planGrowJoin(int nRanks, const braidUniqueId& id, int rank,
                              const std::string& tagPrefix);

}  // namespace braid
