// Host-aware trees: "hier" broadcast and reduce, "hiertree" all-reduce.
//
// Shape. One tree over all ranks in two tiers. The top tier is a binary heap
// over the hosts, starting at the root's host (host position p = host - rootHost
// mod H; parent (p-1)/2, children 2p+1 and 2p+2), joined through one leader per
// host: the root on its own host, the lowest rank elsewhere. The lower tier is
// a binary heap inside each host over the host's stretch: the leader followed by
// the host's other ranks in HostLayout order (ascending, or grouped by cache
// domain). Stretch index k sits at the heap position visited k-th in preorder,
// so every subtree holds a contiguous piece of the stretch and a domain's ranks
// hang together instead of being spread over the heap's levels. A leader's
// children are its child hosts' leaders first, then its local children; that
// order is also the fold order, so results are deterministic. Each host link
// carries the data once per direction, whatever the number of ranks per host.
//
// Timeline (the double binary tree's, on one tree; see double_tree.cc): with D
// the deepest rank's depth and d this rank's, chunk j is folded from the
// children in step j + D - d - 1 and sent to the parent in step j + D - d on
// the way up; received from the parent in step j + D + d - 1 and sent to the
// children in step j + D + d on the way down (broadcast drops the up phase and
// the D offset). Both ends of every message share a step; chunks pipeline.
// Folds of one chunk wait on each other (`after`); each is the only transfer
// from its child in that step. Reduce's interior ranks fold into two
// chunk-sized scratch slots (chunk j in slot j % 2, sent one step later);
// all-reduce folds into recv. Avg divides once, at the top, after the last fold.
#include <algorithm>
#include <map>
#include <vector>

#include "collectives/algorithms/hierarchical.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

namespace {

struct Node {
  int parent = -1;
  std::vector<int> children;  // in fold order
  int depth = 0;
};

int heapDepth(int position) {
  int depth = 0;
  for (int p = position; p > 0; p = (p - 1) / 2) ++depth;
  return depth;
}

class HostTree {
 public:
  HostTree(const CollArgs& args, int root) : layout_(hostLayout(args)), root_(root) {
    hosts_ = layout_.numHosts();
    rootHost_ = layout_.hostOf[root];
    for (int r = 0; r < args.nranks; ++r) depth_ = std::max(depth_, node(r).depth);
  }

  int maxDepth() const { return depth_; }

  Node node(int rank) const {
    Node n;
    const int host = layout_.hostOf[rank];
    const int p = hostPosition(host);
    const int q = localPosition(rank);
    n.depth = heapDepth(p) + heapDepth(q);
    if (q > 0) {
      n.parent = localRank(host, (q - 1) / 2);
    } else if (p > 0) {
      n.parent = leader(hostAt((p - 1) / 2));
    }
    if (q == 0) {
      for (int c : {2 * p + 1, 2 * p + 2}) {
        if (c < hosts_) n.children.push_back(leader(hostAt(c)));
      }
    }
    const int m = static_cast<int>(layout_.ranksOf[host].size());
    for (int c : {2 * q + 1, 2 * q + 2}) {
      if (c < m) n.children.push_back(localRank(host, c));
    }
    return n;
  }

 private:
  int hostPosition(int host) const { return (host - rootHost_ + hosts_) % hosts_; }
  int hostAt(int position) const { return (position + rootHost_) % hosts_; }
  int leader(int host) const { return host == rootHost_ ? root_ : layout_.ranksOf[host][0]; }

  // Stretch index: the leader first, then the host's other ranks in layout order.
  int stretchIndex(int rank) const {
    const int host = layout_.hostOf[rank];
    const int lead = leader(host);
    if (rank == lead) return 0;
    const int index = layout_.localIndex[rank];
    return index < layout_.localIndex[lead] ? index + 1 : index;
  }
  int stretchRank(int host, int index) const {
    const std::vector<int>& ranks = layout_.ranksOf[host];
    const int lead = leader(host);
    if (index == 0) return lead;
    const int leadIndex = layout_.localIndex[lead];
    return ranks[index - 1 < leadIndex ? index - 1 : index];
  }
  // Heap positions <-> stretch indices, through the heap's preorder.
  struct Preorder {
    std::vector<int> positionOf;  // stretch index -> heap position (the preorder)
    std::vector<int> indexOf;     // heap position -> stretch index
  };
  int localPosition(int rank) const {
    return preorder(hostSize(layout_.hostOf[rank])).positionOf[stretchIndex(rank)];
  }
  int localRank(int host, int position) const {
    return stretchRank(host, preorder(hostSize(host)).indexOf[position]);
  }
  int hostSize(int host) const { return static_cast<int>(layout_.ranksOf[host].size()); }
  const Preorder& preorder(int m) const {  // cached per host size
    Preorder& p = preorders_[m];
    if (p.positionOf.empty()) {
      visit(0, m, &p.positionOf);
      p.indexOf.resize(m);
      for (int k = 0; k < m; ++k) p.indexOf[p.positionOf[k]] = k;
    }
    return p;
  }
  static void visit(int position, int m, std::vector<int>* out) {
    if (position >= m) return;
    out->push_back(position);
    visit(2 * position + 1, m, out);
    visit(2 * position + 2, m, out);
  }

  const HostLayout layout_;
  const int root_;
  int hosts_ = 1, rootHost_ = 0, depth_ = 0;
  mutable std::map<int, Preorder> preorders_;  // by host size
};

// Folds one chunk from every child of `node`, in order, into `acc`; the first
// fold combines with `own`. Returns the index of the last fold.
int foldChildren(ScheduleWriter& w, size_t step, const Node& node, Span acc, Span own) {
  int last = -1;
  for (size_t i = 0; i < node.children.size(); ++i) {
    last = w.addRecvReduce(step, node.children[i], acc, i == 0 ? own : acc, last);
  }
  return last;
}

void sendToChildren(ScheduleWriter& w, size_t step, const Node& node, Span src) {
  for (int child : node.children) w.addSend(step, child, src);
}

bool copyAlone(ScheduleWriter& w, const CollArgs& args) {
  if (args.nranks > 1) return false;
  const Slice whole{0, args.count};
  w.addCopy(0, w.span(BufferId::kRecv, whole), w.span(BufferId::kSend, whole));
  if (w.averages()) w.addDivide(1, w.span(BufferId::kRecv, whole));
  return true;
}

}  // namespace

Schedule buildHierarchicalBroadcast(const CollArgs& args) {
  ScheduleWriter w(args, "hier");
  const HostTree tree(args, args.root);
  const Node node = tree.node(args.rank);
  const bool top = node.parent < 0;
  const Slice whole{0, args.count};
  if (top) w.addCopy(0, w.span(BufferId::kRecv, whole), w.span(BufferId::kSend, whole));
  for (size_t j = 0; j < numChunks(args.count, w.chunk()); ++j) {
    Span data = w.span(top ? BufferId::kSend : BufferId::kRecv, chunkOf(whole, w.chunk(), j));
    if (!top) w.addRecv(j + node.depth - 1, node.parent, data);
    sendToChildren(w, j + node.depth, node, data);
  }
  return w.finish();
}

Schedule buildHierarchicalReduce(const CollArgs& args) {
  ScheduleWriter w(args, "hier");
  if (copyAlone(w, args)) return w.finish();
  const HostTree tree(args, args.root);
  const Node node = tree.node(args.rank);
  const size_t depth = tree.maxDepth(), d = node.depth;
  const bool top = node.parent < 0, leaf = node.children.empty();
  const Slice whole{0, args.count};
  const size_t slotElems = std::min(w.chunk(), args.count);
  if (!top && !leaf) w.needScratch(2 * slotElems * w.elemBytes());
  for (size_t j = 0; j < numChunks(args.count, w.chunk()); ++j) {
    const Slice part = chunkOf(whole, w.chunk(), j);
    const Span own = w.span(BufferId::kSend, part);
    if (leaf) {
      w.addSend(j + depth - d, node.parent, own);
      continue;
    }
    const size_t step = j + depth - d - 1;
    if (top) {
      const Span result = w.span(BufferId::kRecv, part);
      int folded = foldChildren(w, step, node, result, own);
      if (w.averages()) w.addDivide(step, result, folded);
      continue;
    }
    const Span partial = w.span(BufferId::kScratch, Slice{(j % 2) * slotElems, part.count});
    foldChildren(w, step, node, partial, own);
    w.addSend(step + 1, node.parent, partial);
  }
  return w.finish();
}

Schedule buildHierarchicalTreeAllReduce(const CollArgs& args) {
  ScheduleWriter w(args, "hiertree");
  if (copyAlone(w, args)) return w.finish();
  const HostTree tree(args, /*root=*/0);
  const Node node = tree.node(args.rank);
  const size_t depth = tree.maxDepth(), d = node.depth;
  const bool top = node.parent < 0, leaf = node.children.empty();
  const Slice whole{0, args.count};
  const size_t chunks = numChunks(args.count, w.chunk());
  // Down-phase actions first in every step, as in the double binary tree.
  for (size_t j = 0; j < chunks; ++j) {
    const Span result = w.span(BufferId::kRecv, chunkOf(whole, w.chunk(), j));
    if (!top) w.addRecv(j + depth + d - 1, node.parent, result);
    sendToChildren(w, j + depth + d, node, result);
  }
  for (size_t j = 0; j < chunks; ++j) {
    const Slice part = chunkOf(whole, w.chunk(), j);
    const Span result = w.span(BufferId::kRecv, part);
    if (!leaf) {
      const size_t step = j + depth - d - 1;
      int folded = foldChildren(w, step, node, result, w.span(BufferId::kSend, part));
      if (top && w.averages()) w.addDivide(step, result, folded);
    }
    if (!top) w.addSend(j + depth - d, node.parent, leaf ? w.span(BufferId::kSend, part) : result);
  }
  return w.finish();
}

}  // namespace braid::coll
