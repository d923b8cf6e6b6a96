// Direct all-gather: every rank sends its block straight to every other rank
// and receives every other block straight from its owner; nobody forwards.
//
// For small messages the cost is hops in sequence, not bytes. The ring's block
// travels n-1 hops, each waiting for the next rank to be scheduled (with more
// ranks than cores, a context switch of several microseconds each); recursive
// doubling or Bruck still take log2(n) dependent rounds. Here one hop: a rank
// is done once every peer has run once since entering the call. Each rank
// posts n-1 sends and n-1 receives, (n-1) times the ring's messages, so the
// selector keeps this to small blocks and few ranks (collectives/algorithm.cc).
//
// Steps: each rank copies its input into its own block of recv in step 0
// (skipped in place); in step c it sends chunk c of its input to every peer and
// receives chunk c of every peer's block, peers in rank order starting after
// itself (so the ranks do not all send to rank 0 first). Both ends of each
// message share its step index.
#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildDirectAllGather(const CollArgs& args) {
  ScheduleWriter w(args, "direct");
  const int n = args.nranks;
  const Slice mine{0, args.count};
  auto blockOf = [&](int rank, Slice part) {
    return Slice{static_cast<size_t>(rank) * args.count + part.offset, part.count};
  };
  w.addCopy(0, w.span(BufferId::kRecv, blockOf(args.rank, mine)), w.span(BufferId::kSend, mine));

  const size_t chunks = numChunks(args.count, w.chunk());
  for (size_t c = 0; c < chunks; ++c) {
    const Slice part = chunkOf(mine, w.chunk(), c);
    for (int k = 1; k < n; ++k) {
      const int peer = (args.rank + k) % n;
      w.addSend(c, peer, w.span(BufferId::kSend, part));
      w.addRecv(c, peer, w.span(BufferId::kRecv, blockOf(peer, part)));
    }
  }
  return w.finish();
}

}  // namespace braid::coll
