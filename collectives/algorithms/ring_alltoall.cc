// Ring all-to-all: store-and-forward around the ring, neighbours only.
//
// Useful where only ring links are fast; otherwise pairwise exchange moves
// less data. A "bundle" from rank src in step s holds src's blocks for ranks
// src+s, ..., src+n-1, in that order.
//   Step 0: rank r stages its blocks for r+1, ..., r+n-1 into scratch (region
//     0) in that order, and copies its own block to recv (skipped in place).
//   Step s = 1..n-1: rank r sends the bundle it holds (from src = r-s+1) to
//     its successor as two messages: the first block, which is the
//     successor's, and the rest. It receives the bundle from src = r-s: the
//     first block straight into recv block src, the rest into the other
//     scratch region, to be forwarded in step s+1.
// Scratch regions alternate (step s fills region s % 2), so a step never
// writes what it sends. Staging first is also what makes in place safe.
#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildRingAllToAll(const CollArgs& args) {
  ScheduleWriter w(args, "ring");
  const int n = args.nranks;
  const int r = args.rank;
  const size_t count = args.count;
  auto block = [&](long index) { return Slice{ringPeer(0, n, index) * count, count}; };
  w.addCopy(0, w.span(BufferId::kRecv, block(r)), w.span(BufferId::kSend, block(r)));
  if (n == 1) return w.finish();

  // Region 0 holds n-1 blocks, region 1 at most n-2.
  auto region = [&](int s, size_t firstBlock, size_t blocks) {
    size_t base = (s % 2) * (n - 1) * count;
    return Slice{base + firstBlock * count, blocks * count};
  };
  w.needScratch((2 * n - 3) * count * w.elemBytes());
  // Blocks for r+1..n-1, then for 0..r-1: two contiguous runs of send.
  size_t tail = n - 1 - r;
  if (tail > 0) {
    w.addCopy(0, w.span(BufferId::kScratch, region(0, 0, tail)),
              w.span(BufferId::kSend, Slice{(r + 1) * count, tail * count}));
  }
  if (r > 0) {
    w.addCopy(0, w.span(BufferId::kScratch, region(0, tail, r)),
              w.span(BufferId::kSend, Slice{0, r * count}));
  }

  const int next = ringNext(r, n);
  const int prev = ringPrev(r, n);
  for (int s = 1; s < n; ++s) {
    size_t forwarded = n - s - 1;  // blocks after the first in this step's bundles
    w.sendChunks(s, next, BufferId::kScratch, region(s - 1, 0, 1));
    if (forwarded > 0) w.sendChunks(s, next, BufferId::kScratch, region(s - 1, 1, forwarded));
    w.recvChunks(s, prev, BufferId::kRecv, block(r - s));
    if (forwarded > 0) w.recvChunks(s, prev, BufferId::kScratch, region(s, 0, forwarded));
  }
  return w.finish();
}

}  // namespace braid::coll
