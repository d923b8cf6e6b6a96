// Host-grouped ring and chain orders (see rank_order.h).
#include "collectives/algorithms/rank_order.h"

#include <algorithm>

#include "collectives/algorithms/hierarchical.h"
#include "topology/search.h"

namespace braid::coll {

namespace {

bool hasUsableHostMap(const CollArgs& args) { return args.hosts != nullptr && hostsAreValid(args); }

// Every rank's host, or all on host 0 without a usable map.
std::vector<int> hostsOf(const CollArgs& args) {
  if (hasUsableHostMap(args)) return *args.hosts;
  return std::vector<int>(static_cast<size_t>(args.nranks), 0);
}

// Every rank's cache domain, or none (empty) without a map of the right size.
std::vector<int> domainsOf(const CollArgs& args) {
  const bool usable =
      args.domains != nullptr && static_cast<int>(args.domains->size()) == args.nranks;
  return usable ? *args.domains : std::vector<int>();
}

}  // namespace

RankOrder::RankOrder(std::vector<int> ranks) : ranks_(std::move(ranks)) {
  positions_.assign(ranks_.size(), 0);
  for (size_t p = 0; p < ranks_.size(); ++p) positions_[ranks_[p]] = static_cast<int>(p);
}

RankOrder RankOrder::ring(const CollArgs& args) {
  return RankOrder(topo::hostLocalRingOrder(hostsOf(args), domainsOf(args)));
}

RankOrder RankOrder::chain(const CollArgs& args, int root) {
  // Each host's stretch of the ring order (domains grouped inside it), hosts by index.
  const std::vector<int> hostOf = hostsOf(args);
  std::vector<std::vector<int>> stretchOf;
  const RankOrder ring = RankOrder::ring(args);
  for (int rank : ring.ranks()) {
    const size_t host = static_cast<size_t>(hostOf[rank]);
    if (stretchOf.size() <= host) stretchOf.resize(host + 1);
    stretchOf[host].push_back(rank);
  }
  const int hosts = static_cast<int>(stretchOf.size());
  const int rootHost = hostOf[root];
  std::vector<int> ranks;
  for (int i = 0; i < hosts; ++i) {
    const std::vector<int>& local = stretchOf[ringPeer(rootHost, hosts, i)];
    const int m = static_cast<int>(local.size());
    // The root's host starts at the root; every other host where its stretch starts.
    const int first =
        i == 0 ? static_cast<int>(std::find(local.begin(), local.end(), root) - local.begin()) : 0;
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
