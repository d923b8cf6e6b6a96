// Dissemination barrier: ceil(log2 n) rounds of zero-byte messages.
//
// In round k rank r sends to r + 2^k and waits for r - 2^k. After round k a
// rank has (transitively) heard from the 2^(k+1) - 1 ranks before it, so once
// 2^(k+1) >= n every rank has heard from all others. Works for any n.
#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildDisseminationBarrier(const CollArgs& args) {
  ScheduleWriter w(args, "dissemination");
  const int n = args.nranks;
  const Span empty{BufferId::kRecv, 0, 0};
  size_t round = 0;
  for (long distance = 1; distance < n; distance *= 2, ++round) {
    w.addSend(round, ringPeer(args.rank, n, distance), empty);
    w.addRecv(round, ringPeer(args.rank, n, -distance), empty);
  }
  return w.finish();
}

}  // namespace braid::coll
