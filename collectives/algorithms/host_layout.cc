// The host layout the hierarchical algorithms share, and when to prefer them.
#include <algorithm>

#include "collectives/algorithms/hierarchical.h"
#include "core/types.h"
#include "topology/search.h"

namespace braid::coll {

namespace {

// All-reduces above this many bytes per rank go hierarchical when a hierarchy
// helps. It is the size where the flat selection leaves the latency-bound
// algorithms (recursive doubling, the tree) for the bandwidth-bound ring
// (algorithm.cc): from there on, bytes crossing the slow host links dominate,
// and the hierarchical all-reduce sends 2(H-1)/H of the buffer per host
// instead of 2(n-1)/n per host boundary of the ring, in fewer hops
// (2(m-1) + 2(H-1) against 2(n-1)).
constexpr size_t kHierarchicalMinBytes = 64 << 10;

}  // namespace

int HostLayout::maxLocalRanks() const {
  size_t most = 0;
  for (const std::vector<int>& ranks : ranksOf) most = std::max(most, ranks.size());
  return static_cast<int>(most);
}

bool hostsAreValid(const CollArgs& args) {
  if (args.hosts == nullptr) return true;
  const std::vector<int>& hosts = *args.hosts;
  if (static_cast<int>(hosts.size()) != args.nranks) return false;
  std::vector<bool> used(hosts.size(), false);
  for (int h : hosts) {
    if (h < 0 || h >= args.nranks) return false;
    used[static_cast<size_t>(h)] = true;
  }
  // Dense numbering: the used indices are exactly 0..H-1.
  auto firstUnused = std::find(used.begin(), used.end(), false);
  return std::find(firstUnused, used.end(), true) == used.end();
}

HostLayout hostLayout(const CollArgs& args) {
  HostLayout layout;
  layout.hostOf.assign(static_cast<size_t>(args.nranks), 0);
  if (args.hosts != nullptr) layout.hostOf = *args.hosts;
  layout.localIndex.resize(layout.hostOf.size());
  // The flat rings' order (rank_order.h): a host's ranks grouped by cache domain, so the
  // in-host rings built on ranksOf cross each domain boundary once. The first rank of a
  // host stays its lowest (domains come in order of their lowest rank).
  const bool byDomain =
      args.domains != nullptr && static_cast<int>(args.domains->size()) == args.nranks;
  for (int r :
       topo::hostLocalRingOrder(layout.hostOf, byDomain ? *args.domains : std::vector<int>())) {
    size_t h = static_cast<size_t>(layout.hostOf[r]);
    if (layout.ranksOf.size() <= h) layout.ranksOf.resize(h + 1);
    layout.localIndex[r] = static_cast<int>(layout.ranksOf[h].size());
    layout.ranksOf[h].push_back(r);
  }
  return layout;
}

bool spansHostsWithLocalPeers(const CollArgs& args) {
  if (args.hosts == nullptr || !hostsAreValid(args)) return false;
  HostLayout layout = hostLayout(args);
  return layout.numHosts() > 1 && layout.maxLocalRanks() > 1;
}

bool prefersHierarchicalAllReduce(const CollArgs& args) {
  return args.count * typeSize(args.type) > kHierarchicalMinBytes && spansHostsWithLocalPeers(args);
}

bool supportsHierarchical(const CollArgs& args) { return hostsAreValid(args); }

}  // namespace braid::coll
