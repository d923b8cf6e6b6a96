// Double binary tree all-reduce, reduce and broadcast.
//
// Shape (see patterns.h): the root on top, two binary trees of the other n-1
// ranks below it, labelled along the host-grouped chain order from the top
// (rank_order.h), so that subtrees gather the ranks of one host. The buffer
// is cut in two halves; half 0 flows through tree 0 and half 1 through tree 1,
// so a rank that works as an interior node for one half is a leaf for the
// other and the load stays balanced. All-reduce uses rank 0 as the top.
//
// Each half travels in chunks along a systolic timeline. With D the depth of
// the deepest rank and d this rank's depth, chunk j is
//   reduced up:  folded from the children in step j + D - d - 1 (children in
//                their fixed order, so results are deterministic) and sent
//                to the parent in step j + D - d;
//   sent down:   received from the parent in step j + D + d - 1 and sent to
//                the children in step j + D + d (broadcast drops the up phase
//                and its D offset).
// A child's send and its parent's receive therefore share a step, chunks
// pipeline through the levels, and a step never writes what it reads.
// The top divides each chunk right after its last fold for avg, so every
// element is divided exactly once before it is sent down.
// Within a step, all-reduce lists down-phase actions before up-phase ones on
// every rank. A child's second fold waits (`after`) on the first; executors
// post the other transfers of the step at once, so the waiting receive must be
// the last one on its connector, even when that child is also this rank's
// parent in the other tree.
// All-reduce folds into recv; reduce folds into two chunk-sized scratch
// slots per tree (chunk j in slot j % 2, sent one step after it is filled)
// because non-roots have no recv. In place is safe: a leaf reads its input
// from send before the result comes down into the same memory.
#include <algorithm>

#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/rank_order.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

namespace {

constexpr int kTrees = 2;

// Folds one chunk from every child of `node`, in order, into `acc`; the
// first fold combines with `own`. Returns the index of the last fold.
int foldChildren(ScheduleWriter& w, size_t step, const TreeNode& node, Span acc, Span own) {
  int last = -1;
  for (int i = 0; i < node.numChildren; ++i) {
    last = w.addRecvReduce(step, node.children[i], acc, i == 0 ? own : acc, last);
  }
  return last;
}

void sendToChildren(ScheduleWriter& w, size_t step, const TreeNode& node, Span src) {
  for (int i = 0; i < node.numChildren; ++i) w.addSend(step, node.children[i], src);
}

}  // namespace

Schedule buildTreeAllReduce(const CollArgs& args) {
  ScheduleWriter w(args, "tree");
  const Slice whole{0, args.count};
  if (args.nranks == 1) {
    w.addCopy(0, w.span(BufferId::kRecv, whole), w.span(BufferId::kSend, whole));
    if (w.averages()) w.addDivide(1, w.span(BufferId::kRecv, whole));
    return w.finish();
  }
  const size_t depth = doubleTreeDepth(args.nranks);
  const RankOrder chain = RankOrder::chain(args, /*root=*/0);
  // Down-phase actions first, then up-phase ones, in every step (see the file comment).
  for (bool down : {true, false}) {
    for (int which = 0; which < kTrees; ++which) {
      const TreeNode node = doubleTreeNode(chain, args.rank, which);
      const Slice half = evenSlice(args.count, kTrees, which);
      const size_t d = node.depth;
      const bool top = node.parent < 0;
      const bool leaf = node.numChildren == 0;
      for (size_t j = 0; j < numChunks(half.count, w.chunk()); ++j) {
        Slice part = chunkOf(half, w.chunk(), j);
        Span result = w.span(BufferId::kRecv, part);
        if (down) {
          if (!top) w.addRecv(j + depth + d - 1, node.parent, result);
          sendToChildren(w, j + depth + d, node, result);
          continue;
        }
        if (!leaf) {
          size_t step = j + depth - d - 1;
          int folded = foldChildren(w, step, node, result, w.span(BufferId::kSend, part));
          if (top && w.averages()) w.addDivide(step, result, folded);
        }
        if (!top) {
          w.addSend(j + depth - d, node.parent, leaf ? w.span(BufferId::kSend, part) : result);
        }
      }
    }
  }
  return w.finish();
}

Schedule buildTreeBroadcast(const CollArgs& args) {
  ScheduleWriter w(args, "tree");
  const Slice whole{0, args.count};
  const RankOrder chain = RankOrder::chain(args, args.root);
  if (args.rank == args.root) {
    w.addCopy(0, w.span(BufferId::kRecv, whole), w.span(BufferId::kSend, whole));
  }
  for (int which = 0; which < kTrees; ++which) {
    const TreeNode node = doubleTreeNode(chain, args.rank, which);
    const Slice half = evenSlice(args.count, kTrees, which);
    const size_t d = node.depth;
    const bool top = node.parent < 0;
    for (size_t j = 0; j < numChunks(half.count, w.chunk()); ++j) {
      Slice part = chunkOf(half, w.chunk(), j);
      Span data = w.span(top ? BufferId::kSend : BufferId::kRecv, part);
      if (!top) w.addRecv(j + d - 1, node.parent, data);
      sendToChildren(w, j + d, node, data);
    }
  }
  return w.finish();
}

Schedule buildTreeReduce(const CollArgs& args) {
  ScheduleWriter w(args, "tree");
  const Slice whole{0, args.count};
  if (args.nranks == 1) {
    w.addCopy(0, w.span(BufferId::kRecv, whole), w.span(BufferId::kSend, whole));
    if (w.averages()) w.addDivide(1, w.span(BufferId::kRecv, whole));
    return w.finish();
  }
  const size_t depth = doubleTreeDepth(args.nranks);
  const RankOrder chain = RankOrder::chain(args, args.root);
  // Half 0 is the larger half, so its chunks bound every slot.
  const size_t slotElems = std::min(w.chunk(), evenSlice(args.count, kTrees, 0).count);
  for (int which = 0; which < kTrees; ++which) {
    const TreeNode node = doubleTreeNode(chain, args.rank, which);
    const Slice half = evenSlice(args.count, kTrees, which);
    const size_t d = node.depth;
    const bool top = node.parent < 0;
    const bool leaf = node.numChildren == 0;
    if (!top && !leaf) w.needScratch(kTrees * 2 * slotElems * w.elemBytes());
    for (size_t j = 0; j < numChunks(half.count, w.chunk()); ++j) {
      Slice part = chunkOf(half, w.chunk(), j);
      Span own = w.span(BufferId::kSend, part);
      if (leaf) {
        w.addSend(j + depth - d, node.parent, own);
        continue;
      }
      size_t step = j + depth - d - 1;
      if (top) {
        Span result = w.span(BufferId::kRecv, part);
        int folded = foldChildren(w, step, node, result, own);
        if (w.averages()) w.addDivide(step, result, folded);
      } else {
        Slice slot{(which * 2 + j % 2) * slotElems, part.count};
        Span partial = w.span(BufferId::kScratch, slot);
        foldChildren(w, step, node, partial, own);
        w.addSend(step + 1, node.parent, partial);
      }
    }
  }
  return w.finish();
}

}  // namespace braid::coll
