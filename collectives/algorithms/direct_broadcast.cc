// Direct (flat-tree) broadcast: the root sends the whole buffer straight to
// every other rank; nobody forwards.
//
// For small messages the cost is hops in sequence, not bytes: every hop waits
// for one more rank to be scheduled, and with more ranks than cores (4 ranks
// on 2 cores) each such wait is a context switch of several microseconds. A
// tree makes the deepest rank wait for its parent to run after the root; here
// every rank depends on the root alone, which posts all n-1 sends at once
// (each lands in the peer's FIFO slot without waiting for it). The root pays
// n-1 sends instead of a tree's two, so the selector keeps this to small
// messages and few ranks (collectives/algorithm.cc).
//
// Steps: the root copies send to recv (skipped in place) in step 0 and sends
// chunk c to every peer, in rank order, in step c; a non-root receives chunk c
// from the root in step c. Both ends of each message share its step index.
#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildDirectBroadcast(const CollArgs& args) {
  ScheduleWriter w(args, "direct");
  const Slice whole{0, args.count};
  const bool isRoot = args.rank == args.root;
  if (isRoot) w.addCopy(0, w.span(BufferId::kRecv, whole), w.span(BufferId::kSend, whole));

  const size_t chunks = numChunks(args.count, w.chunk());
  for (size_t c = 0; c < chunks; ++c) {
    const Slice part = chunkOf(whole, w.chunk(), c);
    if (!isRoot) {
      w.addRecv(c, args.root, w.span(BufferId::kRecv, part));
      continue;
    }
    for (int peer = 0; peer < args.nranks; ++peer) {
      if (peer != args.root) w.addSend(c, peer, w.span(BufferId::kSend, part));
    }
  }
  return w.finish();
}

}  // namespace braid::coll
