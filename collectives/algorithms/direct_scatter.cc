// Direct scatter: the root sends every rank its block straight away.
//
// Step c carries chunk c of every block: the root posts one send per peer (in
// rank order) and copies its own block in step 0 (skipped in place). One hop
// of latency; the root's links set the bandwidth.
#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildDirectScatter(const CollArgs& args) {
  ScheduleWriter w(args, "direct");
  const Slice mine{0, args.count};
  auto blockOf = [&](int rank, Slice part) {
    return Slice{rank * args.count + part.offset, part.count};
  };
  const bool isRoot = args.rank == args.root;
  if (isRoot)
    w.addCopy(0, w.span(BufferId::kRecv, mine), w.span(BufferId::kSend, blockOf(args.rank, mine)));

  const size_t chunks = numChunks(args.count, w.chunk());
  for (size_t c = 0; c < chunks; ++c) {
    Slice part = chunkOf(mine, w.chunk(), c);
    if (!isRoot) {
      w.addRecv(c, args.root, w.span(BufferId::kRecv, part));
      continue;
    }
    for (int peer = 0; peer < args.nranks; ++peer) {
      if (peer != args.root) w.addSend(c, peer, w.span(BufferId::kSend, blockOf(peer, part)));
    }
  }
  return w.finish();
}

}  // namespace braid::coll
