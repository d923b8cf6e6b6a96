// Host-grouped ring and chain orders (see rank_order.h).
#include "collectives/algorithms/rank_order.h"

#include <numeric>

#include "collectives/algorithms/hierarchical.h"
#include "topology/search.h"

namespace braid::coll {

namespace {

std::vector<int> plainOrder(int nranks) {
  std::vector<int> ranks(static_cast<size_t>(nranks));
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

bool hasUsableHostMap(const CollArgs& args) { return args.hosts != nullptr && hostsAreValid(args); }

}  // namespace

RankOrder::RankOrder(std::vector<int> ranks) : ranks_(std::move(ranks)) {
  positions_.assign(ranks_.size(), 0);
  for (size_t p = 0; p < ranks_.size(); ++p) positions_[ranks_[p]] = static_cast<int>(p);
}

RankOrder RankOrder::ring(const CollArgs& args) {
  if (!hasUsableHostMap(args)) return RankOrder(plainOrder(args.nranks));
  return RankOrder(topo::hostLocalRingOrder(*args.hosts));
}

RankOrder RankOrder::chain(const CollArgs& args, int root) {
  if (!hasUsableHostMap(args)) {
    std::vector<int> ranks;
    for (int d = 0; d < args.nranks; ++d) ranks.push_back(ringPeer(root, args.nranks, d));
    return RankOrder(std::move(ranks));
  }
  const HostLayout layout = hostLayout(args);
  const int hosts = layout.numHosts();
  const int rootHost = layout.hostOf[root];
  std::vector<int> ranks;
  for (int i = 0; i < hosts; ++i) {
    const std::vector<int>& local = layout.ranksOf[ringPeer(rootHost, hosts, i)];
    const int m = static_cast<int>(local.size());
    // The root's host starts at the root; every other host at its lowest rank.
    const int first = i == 0 ? layout.localIndex[root] : 0;
    for (int k = 0; k < m; ++k) ranks.push_back(local[ringPeer(first, m, k)]);
  }
  return RankOrder(std::move(ranks));
}

TreeNode doubleTreeNode(const RankOrder& chain, int rank, int which) {
  // Built in position space (top = position 0), then renamed to ranks.
  TreeNode node = doubleTreeNode(chain.positionOf(rank), chain.size(), /*root=*/0, which);
  if (node.parent >= 0) node.parent = chain.rankAt(node.parent);
  for (int i = 0; i < node.numChildren; ++i) node.children[i] = chain.rankAt(node.children[i]);
  return node;
}

}  // namespace braid::coll
