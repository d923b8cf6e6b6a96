// Ring broadcast: a pipelined chain root -> root+1 -> ... -> root+n-1.
//
// The rank at chain position d receives chunk j from its predecessor in step
// j + d - 1 and forwards it to its successor in step j + d, so after the
// pipeline fills every link carries one chunk per step. The root sends from
// send and copies send to recv (skipped in place); the last rank only receives.
#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildRingBroadcast(const CollArgs& args) {
  ScheduleWriter w(args, "ring");
  const int n = args.nranks;
  const int r = args.rank;
  const int position = ringPeer(r, n, -args.root);
  const bool isRoot = position == 0;
  const bool isLast = position == n - 1;
  const Slice whole{0, args.count};
  if (isRoot) w.addCopy(0, w.span(BufferId::kRecv, whole), w.span(BufferId::kSend, whole));

  const size_t chunks = numChunks(args.count, w.chunk());
  for (size_t j = 0; j < chunks; ++j) {
    Slice part = chunkOf(whole, w.chunk(), j);
    if (!isRoot) w.addRecv(j + position - 1, ringPrev(r, n), w.span(BufferId::kRecv, part));
    if (!isLast) {
      BufferId from = isRoot ? BufferId::kSend : BufferId::kRecv;
      w.addSend(j + position, ringNext(r, n), w.span(from, part));
    }
  }
  return w.finish();
}

}  // namespace braid::coll
