// Ring all-gather: every block travels n-1 hops around the ring.
//
// The ring runs in host-grouped order (rank_order.h); below, r is a rank's
// position in it and block p is the block of the rank at position p.
// Rank r first copies its input into its own block of recv (skipped in place,
// where send already is that block). In round k = 0..n-2 it sends block r-k to its
// successor (round 0 straight from send) and receives block r-k-1 from its
// predecessor, which is the block it forwards in round k+1. Round k chunk c is
// step k * C + c on every rank.
#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/rank_order.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildRingAllGather(const CollArgs& args) {
  ScheduleWriter w(args, "ring");
  const int n = args.nranks;
  const RankOrder ring = RankOrder::ring(args);
  const int r = ring.positionOf(args.rank);
  auto block = [&](long position) {
    return Slice{static_cast<size_t>(ring.rankAt(position)) * args.count, args.count};
  };
  w.addCopy(0, w.span(BufferId::kRecv, block(r)), w.span(BufferId::kSend, Slice{0, args.count}));

  const int next = ring.next(args.rank);
  const int prev = ring.prev(args.rank);
  const size_t chunks = numChunks(args.count, w.chunk());
  for (int k = 0; k < n - 1; ++k) {
    // Round 0 sends this rank's own input; later rounds forward what arrived.
    Slice out = k == 0 ? Slice{0, args.count} : block(r - k);
    BufferId outBuf = k == 0 ? BufferId::kSend : BufferId::kRecv;
    Slice in = block(r - k - 1);
    for (size_t c = 0; c < chunks; ++c) {
      size_t step = k * chunks + c;
      w.addSend(step, next, w.span(outBuf, chunkOf(out, w.chunk(), c)));
      w.addRecv(step, prev, w.span(BufferId::kRecv, chunkOf(in, w.chunk(), c)));
    }
  }
  return w.finish();
}

}  // namespace braid::coll
