// Ring all-to-all: store-and-forward around the ring, neighbours only.
//
// Useful where only ring links are fast; otherwise pairwise exchange moves
// less data. The ring runs in host-grouped order (rank_order.h); below, p is a
// rank's position in it and "rank p+i" the rank i places after it. A "bundle"
// from the rank at position q in step s holds its blocks for the ranks at
// positions q+s, ..., q+n-1, in that order.
//   Step 0: rank p stages its blocks for p+1, ..., p+n-1 into scratch (region
//     0) in that order, and copies its own block to recv (skipped in place).
//   Step s = 1..n-1: rank p sends the bundle it holds (from q = p-s+1) to its
//     successor as two messages: the first block, which is the successor's,
//     and the rest. It receives the bundle from q = p-s: the first block
//     straight into recv block q, the rest into the other scratch region, to
//     be forwarded in step s+1.
// Scratch regions alternate (step s fills region s % 2), so a step never
// writes what it sends. Staging first is also what makes in place safe.
#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/rank_order.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildRingAllToAll(const CollArgs& args) {
  ScheduleWriter w(args, "ring");
  const int n = args.nranks;
  const RankOrder ring = RankOrder::ring(args);
  const int p = ring.positionOf(args.rank);
  const size_t count = args.count;
  auto block = [&](int rank) { return Slice{static_cast<size_t>(rank) * count, count}; };
  w.addCopy(0, w.span(BufferId::kRecv, block(args.rank)),
            w.span(BufferId::kSend, block(args.rank)));
  if (n == 1) return w.finish();

  // Region 0 holds n-1 blocks, region 1 at most n-2.
  auto region = [&](int s, size_t firstBlock, size_t blocks) {
    size_t base = (s % 2) * (n - 1) * count;
    return Slice{base + firstBlock * count, blocks * count};
  };
  w.needScratch((2 * n - 3) * count * w.elemBytes());
  // Blocks for p+1..p+n-1, one copy per run of consecutive ranks in send (in rank
  // order that is two runs: ranks r+1..n-1, then 0..r-1).
  for (int i = 1; i < n;) {
    const int first = ring.rankAt(p + i);
    int blocks = 1;
    while (i + blocks < n && ring.rankAt(p + i + blocks) == first + blocks) ++blocks;
    w.addCopy(0, w.span(BufferId::kScratch, region(0, i - 1, blocks)),
              w.span(BufferId::kSend, Slice{first * count, blocks * count}));
    i += blocks;
  }

  const int next = ring.next(args.rank);
  const int prev = ring.prev(args.rank);
  for (int s = 1; s < n; ++s) {
    size_t forwarded = n - s - 1;  // blocks after the first in this step's bundles
    w.sendChunks(s, next, BufferId::kScratch, region(s - 1, 0, 1));
    if (forwarded > 0) w.sendChunks(s, next, BufferId::kScratch, region(s - 1, 1, forwarded));
    w.recvChunks(s, prev, BufferId::kRecv, block(ring.rankAt(p - s)));
    if (forwarded > 0) w.recvChunks(s, prev, BufferId::kScratch, region(s, 0, forwarded));
  }
  return w.finish();
}

}  // namespace braid::coll
