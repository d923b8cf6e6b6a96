// Ring barrier: n-1 rounds of a zero-byte message to the successor.
//
// In round k every rank sends to its successor and waits for its predecessor.
// A rank finishing round k has (transitively) heard from the k+1 ranks before
// it, so after n-1 rounds no rank leaves before every rank has arrived.
// Dissemination does the same in ceil(log2 n) rounds; this is the variant
// that uses ring links only.
#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/rank_order.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildRingBarrier(const CollArgs& args) {
  ScheduleWriter w(args, "ring");
  const int n = args.nranks;
  const Span empty{BufferId::kRecv, 0, 0};
  const RankOrder ring = RankOrder::ring(args);  // host-grouped: H host crossings
  for (int k = 0; k < n - 1; ++k) {
    w.addSend(k, ring.next(args.rank), empty);
    w.addRecv(k, ring.prev(args.rank), empty);
  }
  return w.finish();
}

}  // namespace braid::coll
