// Ring broadcast: a pipelined chain from the root through every rank.
//
// The chain follows the host-grouped chain order from the root (rank_order.h),
// so it crosses H - 1 host boundaries.
// The rank at chain position d receives chunk j from its predecessor in step
// j + d - 1 and forwards it to its successor in step j + d, so after the
// pipeline fills every link carries one chunk per step. The root sends from
// send and copies send to recv (skipped in place); the last rank only receives.
//
// Chunks exist so that a rank can forward one while the next arrives. On two
// ranks nobody forwards, so the buffer goes as one message: over TCP a 2 MiB
// broadcast cut into 512 KiB chunks ran slower than one message, and on
// shared memory the two measured even (perf/RESULTS.md, "TCP, 2 ranks").
#include <algorithm>

#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/rank_order.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildRingBroadcast(const CollArgs& args) {
  ScheduleWriter w(args, "ring");
  const int n = args.nranks;
  const int r = args.rank;
  const RankOrder chain = RankOrder::chain(args, args.root);
  const int position = chain.positionOf(r);
  const bool isRoot = position == 0;
  const bool isLast = position == n - 1;
  const Slice whole{0, args.count};
  if (isRoot) w.addCopy(0, w.span(BufferId::kRecv, whole), w.span(BufferId::kSend, whole));

  const size_t perChunk = n == 2 ? std::max<size_t>(args.count, 1) : w.chunk();
  const size_t chunks = numChunks(args.count, perChunk);
  for (size_t j = 0; j < chunks; ++j) {
    Slice part = chunkOf(whole, perChunk, j);
    if (!isRoot) w.addRecv(j + position - 1, chain.prev(r), w.span(BufferId::kRecv, part));
    if (!isLast) {
      BufferId from = isRoot ? BufferId::kSend : BufferId::kRecv;
      w.addSend(j + position, chain.next(r), w.span(from, part));
    }
  }
  return w.finish();
}

}  // namespace braid::coll
