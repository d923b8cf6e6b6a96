// Ring reduce-scatter: every rank ends with its own block reduced over all ranks.
//
// The ring runs in host-grouped order (rank_order.h); below, r is a rank's
// position in it and block p is the block of the rank at position p.
// Round k = 0..n-2: rank r sends block r-k-1 to its successor (its own input
// in round 0, afterwards the partial it reduced in round k-1) and folds block
// r-k-2 from its predecessor into its own input for that block. The last
// round folds block r into recv, which is then final (and divided once there
// for avg).
// The loop is chunk-major: chunk c of round k is step c * (n-1) + k, so a
// partial reduced in one step is sent in the next. That bounds scratch to two
// chunk-sized slots used alternately (round k writes slot k % 2), instead of
// whole blocks, and send is never written.
// In place, recv is block r of send: it is read (as this rank's input) only by
// the final fold that overwrites it.
#include <algorithm>

#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/rank_order.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildRingReduceScatter(const CollArgs& args) {
  ScheduleWriter w(args, "ring");
  const int n = args.nranks;
  const RankOrder ring = RankOrder::ring(args);
  const int r = ring.positionOf(args.rank);
  auto block = [&](long position) {
    return Slice{static_cast<size_t>(ring.rankAt(position)) * args.count, args.count};
  };
  const Slice mine{0, args.count};
  if (n == 1) {
    w.addCopy(0, w.span(BufferId::kRecv, mine), w.span(BufferId::kSend, block(0)));
    if (w.averages()) w.addDivide(1, w.span(BufferId::kRecv, mine));
    return w.finish();
  }
  const int next = ring.next(args.rank);
  const int prev = ring.prev(args.rank);
  const size_t slotElems = std::min(w.chunk(), args.count);
  if (n > 2) w.needScratch(2 * slotElems * w.elemBytes());  // two ranks fold straight into recv
  auto slot = [&](int round, size_t elems) { return Slice{(round % 2) * slotElems, elems}; };

  const size_t chunks = numChunks(args.count, w.chunk());
  const int rounds = n - 1;
  for (size_t c = 0; c < chunks; ++c) {
    const Slice part = chunkOf(mine, w.chunk(), c);  // this chunk's range inside any block
    auto inBlock = [&](long index) { return Slice{block(index).offset + part.offset, part.count}; };
    for (int k = 0; k < rounds; ++k) {
      size_t step = c * rounds + k;
      if (k == 0) {
        w.addSend(step, next, w.span(BufferId::kSend, inBlock(r - 1)));
      } else {
        w.addSend(step, next, w.span(BufferId::kScratch, slot(k - 1, part.count)));
      }
      Span own = w.span(BufferId::kSend, inBlock(r - k - 2));
      if (k == rounds - 1) {
        Span result = w.span(BufferId::kRecv, part);
        int fold = w.addRecvReduce(step, prev, result, own);
        if (w.averages()) w.addDivide(step, result, fold);
      } else {
        w.addRecvReduce(step, prev, w.span(BufferId::kScratch, slot(k, part.count)), own);
      }
    }
  }
  return w.finish();
}

}  // namespace braid::coll
