// Direct gather: every rank sends its block straight to the root.
//
// Step c carries chunk c of every block: the root posts one receive per peer
// (in rank order) and copies its own block in step 0 (skipped in place). All
// n-1 transfers into the root run concurrently, so the root's links, not a
// chain of hops, set the time: one hop of latency instead of n-1.
#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildDirectGather(const CollArgs& args) {
  ScheduleWriter w(args, "direct");
  const Slice mine{0, args.count};
  auto blockOf = [&](int rank, Slice part) {
    return Slice{rank * args.count + part.offset, part.count};
  };
  const bool isRoot = args.rank == args.root;
  if (isRoot)
    w.addCopy(0, w.span(BufferId::kRecv, blockOf(args.rank, mine)), w.span(BufferId::kSend, mine));

  const size_t chunks = numChunks(args.count, w.chunk());
  for (size_t c = 0; c < chunks; ++c) {
    Slice part = chunkOf(mine, w.chunk(), c);
    if (!isRoot) {
      w.addSend(c, args.root, w.span(BufferId::kSend, part));
      continue;
    }
    for (int peer = 0; peer < args.nranks; ++peer) {
      if (peer != args.root) w.addRecv(c, peer, w.span(BufferId::kRecv, blockOf(peer, part)));
    }
  }
  return w.finish();
}

}  // namespace braid::coll
