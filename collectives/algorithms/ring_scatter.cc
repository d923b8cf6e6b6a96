// Ring scatter: a chain from the root through every rank, relaying blocks.
//
// The chain follows the host-grouped chain order from the root (rank_order.h),
// so it crosses H - 1 host boundaries.
// The root sends the blocks farthest-first: in round t it sends the block of
// chain position n-1-t, so the pipeline fills and every link stays busy. The
// rank at position d >= 1 receives in rounds d-1..n-2; the last of those
// blocks is its own and lands in recv, the others go to scratch and are
// forwarded to position d+1 in the next round. The root copies its own block
// to recv (skipped in place). Round t of chunk c is step c * (n-1) + t on
// every rank; chunk-major order bounds the relay scratch to two chunk-sized
// slots (round t fills slot t % 2).
#include <algorithm>

#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/rank_order.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildRingScatter(const CollArgs& args) {
  ScheduleWriter w(args, "ring");
  const int n = args.nranks;
  const int r = args.rank;
  const RankOrder chain = RankOrder::chain(args, args.root);
  const int position = chain.positionOf(r);
  const Slice mine{0, args.count};
  if (position == 0) {
    w.addCopy(0, w.span(BufferId::kRecv, mine),
              w.span(BufferId::kSend, Slice{r * args.count, args.count}));
  }
  const size_t slotElems = std::min(w.chunk(), args.count);
  auto slot = [&](int round, size_t elems) { return Slice{(round % 2) * slotElems, elems}; };
  if (position > 0 && position < n - 1) w.needScratch(2 * slotElems * w.elemBytes());

  const int rounds = n - 1;
  const size_t chunks = numChunks(args.count, w.chunk());
  for (size_t c = 0; c < chunks; ++c) {
    const Slice part = chunkOf(mine, w.chunk(), c);
    for (int t = 0; t < rounds; ++t) {
      size_t step = c * rounds + t;
      if (position == 0) {
        size_t owner = chain.rankAt(n - 1 - t);
        Slice block{owner * args.count + part.offset, part.count};
        w.addSend(step, chain.next(r), w.span(BufferId::kSend, block));
        continue;
      }
      if (t < position - 1) continue;
      if (t == n - 2) {
        w.addRecv(step, chain.prev(r), w.span(BufferId::kRecv, part));
      } else {
        Span relay = w.span(BufferId::kScratch, slot(t, part.count));
        w.addRecv(step, chain.prev(r), relay);
        w.addSend(step + 1, chain.next(r), relay);
      }
    }
  }
  return w.finish();
}

}  // namespace braid::coll
