// Ring all-reduce: a reduce-scatter ring followed by an all-gather ring.
//
// The ring runs in host-grouped order (rank_order.h): with H > 1 hosts it
// crosses a host boundary H times. Below, r is a rank's position in that order.
// The buffer is cut into n nearly equal segments. Every rank sends to its ring
// successor and receives from its predecessor.
//   Reduce-scatter, rounds k = 0..n-2: rank r sends segment r-k (its own data
//     in round 0, the partial it reduced in round k-1 afterwards) and folds
//     segment r-k-1 from its predecessor into recv (recv = send (op) incoming).
//     After the last round, segment r+1 holds the full result at rank r; for
//     avg, rank r divides that segment there, so each element is divided once.
//   All-gather, rounds k = 0..n-2: rank r forwards segment r+1-k and receives
//     segment r-k, finished, from its predecessor.
// Each segment travels in chunks; round k chunk c is step k * C + c on every
// rank (C = chunks of the largest segment), so both ends of a message share a
// step index. Results are bitwise identical on all ranks: each segment is
// reduced once, in ring order, then copied around.
// In place (send == recv) is safe: a segment is read from send only before
// this rank first writes it.
#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/rank_order.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildRingAllReduce(const CollArgs& args) {
  ScheduleWriter w(args, "ring");
  const int n = args.nranks;
  const RankOrder ring = RankOrder::ring(args);
  const int r = ring.positionOf(args.rank);
  Slice whole{0, args.count};
  if (n == 1) {
    w.addCopy(0, w.span(BufferId::kRecv, whole), w.span(BufferId::kSend, whole));
    if (w.averages()) w.addDivide(1, w.span(BufferId::kRecv, whole));
    return w.finish();
  }
  const int next = ring.next(args.rank);
  const int prev = ring.prev(args.rank);
  auto segment = [&](long index) { return evenSlice(args.count, n, ringPeer(0, n, index)); };
  const size_t chunksPerRound = numChunks(segment(0).count, w.chunk());

  for (int k = 0; k < n - 1; ++k) {
    Slice out = segment(r - k);
    Slice in = segment(r - k - 1);
    for (size_t c = 0; c < chunksPerRound; ++c) {
      size_t step = k * chunksPerRound + c;
      Slice outChunk = chunkOf(out, w.chunk(), c);
      Slice inChunk = chunkOf(in, w.chunk(), c);
      if (outChunk.count > 0) {
        w.addSend(step, next, w.span(k == 0 ? BufferId::kSend : BufferId::kRecv, outChunk));
      }
      if (inChunk.count > 0) {
        int reduce = w.addRecvReduce(step, prev, w.span(BufferId::kRecv, inChunk),
                                     w.span(BufferId::kSend, inChunk));
        if (k == n - 2 && w.averages()) w.addDivide(step, w.span(BufferId::kRecv, inChunk), reduce);
      }
    }
  }
  const size_t gatherStart = (n - 1) * chunksPerRound;
  for (int k = 0; k < n - 1; ++k) {
    Slice out = segment(r + 1 - k);
    Slice in = segment(r - k);
    for (size_t c = 0; c < chunksPerRound; ++c) {
      size_t step = gatherStart + k * chunksPerRound + c;
      Slice outChunk = chunkOf(out, w.chunk(), c);
      Slice inChunk = chunkOf(in, w.chunk(), c);
      if (outChunk.count > 0) w.addSend(step, next, w.span(BufferId::kRecv, outChunk));
      if (inChunk.count > 0) w.addRecv(step, prev, w.span(BufferId::kRecv, inChunk));
    }
  }
  return w.finish();
}

}  // namespace braid::coll
