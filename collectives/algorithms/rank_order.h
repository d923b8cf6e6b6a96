// Orders of ranks that keep ring and chain traffic inside hosts and cache domains.
//
// Ring and chain schedules move data between neighbours of an order of ranks.
// In plain rank order, ranks spread across hosts (a round-robin launcher puts
// ranks 0, 2 on host A and 1, 3 on host B) make every hop cross a host
// boundary. The orders here group the ranks of each host (CollArgs::hosts):
//   ring order:   hosts in index order (hosts are numbered by their lowest
//                 rank), each host's ranks ascending (topo::hostLocalRingOrder).
//                 A ring over it crosses a host boundary exactly H times when
//                 there are H > 1 hosts, the fewest any ring can.
//   chain order:  for rooted collectives: the root, then the other ranks of its
//                 host cyclically after it, then the following hosts in
//                 cyclic index order, each ascending. A chain from the root
//                 crosses H - 1 boundaries; trees labelled by chain position
//                 (the double binary tree, patterns.h) give contiguous label
//                 ranges to a subtree, so subtrees stay inside a host as far
//                 as their sizes allow.
// With cache domains (CollArgs::domains), each host's ranks are grouped further
// by domain, domains in order of their lowest rank, so that neighbours share an
// L3 where they can; the chain takes each host's stretch of that ring order.
// Without a host map (or with a malformed one) everything is one host, and the
// orders are the plain ones the builders always used: 0, 1, ..., n-1 and root,
// root+1, ..., root-1. A blocked layout (hosts holding consecutive ranks) also
// keeps rank order. Every rank computes the same order from the shared map.
#pragma once

#include <vector>

#include "collectives/algorithms/patterns.h"
#include "collectives/schedule.h"

namespace braid::coll {

class RankOrder {
 public:
  /// The ring order of args.nranks ranks described above.
  static RankOrder ring(const CollArgs& args);
  /// The chain order from `root` described above.
  static RankOrder chain(const CollArgs& args, int root);
  /// An order given explicitly: ranks[position]; must be a permutation of 0..n-1.
  explicit RankOrder(std::vector<int> ranks);

  int size() const { return static_cast<int>(ranks_.size()); }
  /// The rank at `position`, taken modulo size (positions may be negative).
  int rankAt(long position) const { return ranks_[ringPeer(0, size(), position)]; }
  int positionOf(int rank) const { return positions_[rank]; }
  /// The rank `distance` places after `rank` in this order, wrapping around.
  int peer(int rank, long distance) const { return rankAt(positionOf(rank) + distance); }
  int next(int rank) const { return peer(rank, 1); }
  int prev(int rank) const { return peer(rank, -1); }
  const std::vector<int>& ranks() const { return ranks_; }

 private:
  std::vector<int> ranks_;      // position -> rank
  std::vector<int> positions_;  // rank -> position
};

/// The place of `rank` in tree `which` of the double binary tree (patterns.h) laid over
/// `chain`: the chain's first rank is the top, and labels follow chain positions.
TreeNode doubleTreeNode(const RankOrder& chain, int rank, int which);

}  // namespace braid::coll
