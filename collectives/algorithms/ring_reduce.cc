// Ring reduce: a pipelined chain through every rank that ends at the root.
//
// The chain follows the host-grouped chain order from the root (rank_order.h),
// so it crosses H - 1 host boundaries.
// Let e be a rank's distance from the tail of the chain (the tail, position
// n-1, has e = 0). The tail sends chunk j of its input in step j; a rank with
// e >= 1 folds chunk j from its successor into its own input in step
// j + e - 1 and passes the partial on in step j + e. The root folds into recv
// and, for avg, divides each chunk right after its last fold.
// Non-roots have no recv, so partials live in scratch: two chunk-sized slots,
// chunk j in slot j % 2, each sent one step after it is filled.
#include <algorithm>

#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/rank_order.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildRingReduce(const CollArgs& args) {
  ScheduleWriter w(args, "ring");
  const int n = args.nranks;
  const int r = args.rank;
  const RankOrder chain = RankOrder::chain(args, args.root);
  const int position = chain.positionOf(r);
  const bool isRoot = position == 0;
  const size_t fromTail = n - 1 - position;
  const Slice whole{0, args.count};
  const size_t slotElems = std::min(w.chunk(), args.count);
  auto slot = [&](size_t j, size_t elems) { return Slice{(j % 2) * slotElems, elems}; };
  if (!isRoot && fromTail > 0) w.needScratch(2 * slotElems * w.elemBytes());
  if (n == 1) {
    w.addCopy(0, w.span(BufferId::kRecv, whole), w.span(BufferId::kSend, whole));
    if (w.averages()) w.addDivide(1, w.span(BufferId::kRecv, whole));
    return w.finish();
  }

  const size_t chunks = numChunks(args.count, w.chunk());
  for (size_t j = 0; j < chunks; ++j) {
    Slice part = chunkOf(whole, w.chunk(), j);
    Span own = w.span(BufferId::kSend, part);
    if (fromTail == 0) {
      w.addSend(j, chain.prev(r), own);
      continue;
    }
    size_t foldStep = j + fromTail - 1;
    if (isRoot) {
      Span result = w.span(BufferId::kRecv, part);
      int fold = w.addRecvReduce(foldStep, chain.next(r), result, own);
      if (w.averages()) w.addDivide(foldStep, result, fold);
    } else {
      Span partial = w.span(BufferId::kScratch, slot(j, part.count));
      w.addRecvReduce(foldStep, chain.next(r), partial, own);
      w.addSend(foldStep + 1, chain.prev(r), partial);
    }
  }
  return w.finish();
}

}  // namespace braid::coll
