// Ring gather: a chain towards the root through every rank, relaying blocks.
//
// The chain follows the host-grouped chain order from the root (rank_order.h),
// so it crosses H - 1 host boundaries.
// The rank at chain position d sends its own block to position d-1, then
// relays, one block per round, the n-1-d blocks of the ranks behind it, in
// chain order; the root drops each arriving block into its place in recv and
// copies its own (skipped in place). Round t of chunk c is step c * (n-1) + t
// on every rank: position d sends the block of position d+t in round t and
// receives the block of position d+1+t, so each link carries one chunk per
// step. Chunk-major order means a relayed chunk leaves one step after it
// arrived, so relays need only two chunk-sized scratch slots (round t fills
// slot t % 2).
#include <algorithm>

#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/rank_order.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildRingGather(const CollArgs& args) {
  ScheduleWriter w(args, "ring");
  const int n = args.nranks;
  const int r = args.rank;
  const RankOrder chain = RankOrder::chain(args, args.root);
  const int position = chain.positionOf(r);
  const Slice mine{0, args.count};
  if (position == 0) {
    w.addCopy(0, w.span(BufferId::kRecv, Slice{r * args.count, args.count}),
              w.span(BufferId::kSend, mine));
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
      if (position > 0 && t <= n - 1 - position) {
        Span out = t == 0 ? w.span(BufferId::kSend, part)
                          : w.span(BufferId::kScratch, slot(t - 1, part.count));
        w.addSend(step, chain.prev(r), out);
      }
      if (t <= n - 2 - position) {
        Span in;
        if (position == 0) {
          size_t owner = chain.rankAt(1 + t);
          in = w.span(BufferId::kRecv, Slice{owner * args.count + part.offset, part.count});
        } else {
          in = w.span(BufferId::kScratch, slot(t, part.count));
        }
        w.addRecv(step, chain.next(r), in);
      }
    }
  }
  return w.finish();
}

}  // namespace braid::coll
