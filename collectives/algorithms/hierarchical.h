// Hierarchical (multi-host) algorithms and the host layout they are built on.
//
// A communicator that spans several hosts has two kinds of links: fast ones
// between ranks of one host (shared memory) and slow ones between hosts. The
// flat ring crosses a host boundary on every hop where ranks of different
// hosts are neighbours, and each crossing carries 2(n-1)/n of the buffer. The
// hierarchical algorithms keep most bytes inside a host:
//   "hier" all-reduce:  intra-host reduce-scatter -> inter-host all-reduce
//                       (one ring per lane, over the ranks that own the lane on
//                       each host) -> intra-host all-gather; a host sends
//                       2(H-1)/H of the buffer across its link, not up to
//                       2(n-1)/n per boundary rank.
//   "hier" broadcast / reduce and "hiertree" all-reduce: a tree whose top
//                       levels join one leader per host (a binary tree over the
//                       hosts) and whose lower levels are a binary tree inside
//                       each host; one copy of the data crosses each host link.
// They read CollArgs::hosts (the rank -> host map every rank shares); ranks of
// a host need not be contiguous, and hosts may hold different rank counts.
// With CollArgs::domains, a host's ranks are taken grouped by cache domain, so the
// in-host rings cross each domain boundary once and the in-host trees keep a
// domain's ranks in one stretch of the tree where they can.
#pragma once

#include <vector>

#include "collectives/schedule.h"

namespace braid::coll {

/// The ranks of a communicator grouped by host, derived from CollArgs::hosts.
struct HostLayout {
  // Per host, its ranks: ascending, or grouped by cache domain (CollArgs::domains) as the
  // flat ring order groups them (topo::hostLocalRingOrder); the first is the host's lowest.
  std::vector<std::vector<int>> ranksOf;
  std::vector<int> hostOf;      // per rank, its host
  std::vector<int> localIndex;  // per rank, its position in ranksOf[hostOf]
  int numHosts() const { return static_cast<int>(ranksOf.size()); }
  int maxLocalRanks() const;
};

/// The layout of args.hosts; one host holding every rank when hosts is null.
/// Requires a valid map (hostsAreValid).
HostLayout hostLayout(const CollArgs& args);

/// Whether args.hosts is null or names a host 0 <= h < nranks for each of the nranks
/// ranks, with hosts numbered densely (every index below the largest is used).
bool hostsAreValid(const CollArgs& args);

/// True when a hierarchy helps: the ranks span more than one host and some host holds
/// more than one rank. The same on every rank (it reads only the shared host map).
bool spansHostsWithLocalPeers(const CollArgs& args);

/// Whether the default selection should pick "hier" for this all-reduce: a hierarchy
/// helps (above) and the message is large enough that bandwidth, not hops, dominates.
bool prefersHierarchicalAllReduce(const CollArgs& args);

/// The hierarchical algorithms accept any valid host map (one host included).
bool supportsHierarchical(const CollArgs& args);

Schedule buildHierarchicalAllReduce(const CollArgs& args);
Schedule buildHierarchicalTreeAllReduce(const CollArgs& args);
Schedule buildHierarchicalBroadcast(const CollArgs& args);
Schedule buildHierarchicalReduce(const CollArgs& args);

}  // namespace braid::coll
