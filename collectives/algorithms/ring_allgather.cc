// Ring all-gather: every block travels n-1 hops around the ring.
//
// Rank r first copies its input into block r of recv (skipped in place, where
// send already is block r). In round k = 0..n-2 it sends block r-k to its
// successor (round 0 straight from send) and receives block r-k-1 from its
// predecessor, which is the block it forwards in round k+1. Round k chunk c is
// step k * C + c on every rank.
#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildRingAllGather(const CollArgs& args) {
  ScheduleWriter w(args, "ring");
  const int n = args.nranks;
  const int r = args.rank;
  auto block = [&](long index) { return Slice{ringPeer(0, n, index) * args.count, args.count}; };
  w.addCopy(0, w.span(BufferId::kRecv, block(r)), w.span(BufferId::kSend, Slice{0, args.count}));

  const int next = ringNext(r, n);
  const int prev = ringPrev(r, n);
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
