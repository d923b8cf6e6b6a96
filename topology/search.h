// Channel search: rings and trees over one host's endpoints that maximise the
// bandwidth they carry together, plus the rank order that keeps traffic local.
//
// Model: every link is full duplex with a capacity per direction. A channel runs at
// one speed s; each of its hops (ring: endpoint i to i+1; tree: child to parent and
// back) is routed over a path of links with at least s left in that direction, and
// takes s from each. Paths may pass through CPUs, PCIe switches and NVSwitches, never
// through another GPU or a NIC. For each candidate speed (every link bandwidth divided
// by 1..maxChannels) the search packs as many channels as it finds; the result is the
// fewest channels within 10% of the best total (a few fast channels cost less than many
// slow ones for the same bandwidth). Ties between paths go to the fewest hops, then to
// the most capacity left, which keeps NUMA/PCIe locality and spreads load.
//
// The search is deterministic: every rank that runs it on the same graph gets the same
// channels, so it can feed selection without any exchange.
#pragma once

#include <string>
#include <vector>

#include "topology/graph.h"

namespace braid::topo {

/// One ring: endpoints (node indices of the host) in ring order, and the links each hop
/// uses (hop i goes from order[i] to order[(i+1) % n]).
struct Ring {
  std::vector<int> order;
  std::vector<std::vector<int>> hopLinks;  // link indices into HostKind::links
  double gbps = 0;
};

/// One tree: parent[i] is the parent of endpoints()[i] (-1 for the root).
struct Tree {
  std::vector<int> parent;
  std::vector<std::vector<int>> edgeLinks;  // per endpoint: links toward its parent
  int root = 0;
  double gbps = 0;
};

struct Channels {
  std::vector<Ring> rings;
  std::vector<Tree> trees;
  double ringGBps() const;  // sum over rings: what one ring all-reduce step can move
  double treeGBps() const;
};

struct SearchOptions {
  int maxChannels = 16;
  double nearBest = 0.9;  // accept fewer channels when they reach this share of the best
};

/// Rings and trees for `host`. A host with one endpoint gets one trivial ring and tree
/// limited only by memory (reported as 0 GB/s: no link is used).
Channels searchChannels(const HostKind& host, const SearchOptions& options = {});

/// Whether every link on every hop of `ring` has type `type`.
bool ringUsesOnly(const HostKind& host, const Ring& ring, LinkType type);

/// The order of ranks around a ring that crosses each host boundary once: ranks grouped by
/// `hostOfRank` (hosts in order of their lowest rank), ranks of a host in rank order.
/// With `domainOfRank` (the same size; empty: none), a host's ranks are grouped further by
/// cache domain (domains in order of their lowest rank on that host), so that the ring also
/// crosses each domain boundary inside a host once. Pure; identical on every rank given
/// the same input.
std::vector<int> hostLocalRingOrder(const std::vector<int>& hostOfRank,
                                    const std::vector<int>& domainOfRank = {});

/// "gpu0 -> gpu3 -> ... (25 GB/s, nvlink)" for printing.
std::string describeRing(const HostKind& host, const Ring& ring);
std::string describeTree(const HostKind& host, const Tree& tree);

}  // namespace braid::topo
