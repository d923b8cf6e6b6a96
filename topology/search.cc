// Ring and tree search over one host (see search.h for the model).
//
// Residual holds what each link has left per direction. A ring at speed s is found
// by depth-first search from endpoint 0: extend the partial ring with the unvisited
// endpoint reachable at speed s over the fewest hops (then the most capacity left),
// backtrack when stuck, close the ring when all are placed. A tree at speed s grows
// from its root like Prim's algorithm, attaching one endpoint at a time to a tree node
// with fewer than two children, over paths with s left in both directions (reductions
// go up, broadcasts come down). A bounded number of expansions per channel keeps the
// search cheap on large hosts; the answer stays deterministic.
#include "topology/search.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "topology/residual.h"

namespace braid::topo {
namespace {

using search_detail::linksOf;
using search_detail::Path;
using search_detail::Residual;

constexpr int kExpansionBudget = 20000;  // DFS steps per ring before giving up on it
constexpr double kEpsilon = 1e-9;

class RingFinder {
 public:
  RingFinder(const std::vector<int>& endpoints, Residual* residual, double s)
      : endpoints_(endpoints), residual_(residual), s_(s) {}

  bool find(Ring* ring) {
    budget_ = kExpansionBudget;
    order_ = {0};
    paths_.clear();
    used_.assign(endpoints_.size(), 0);
    used_[0] = 1;
    if (!extend()) return false;
    ring->gbps = s_;
    ring->order.clear();
    ring->hopLinks.clear();
    for (size_t i = 0; i < order_.size(); ++i) {
      ring->order.push_back(endpoints_[order_[i]]);
      ring->hopLinks.push_back(linksOf(paths_[i]));
    }
    return true;
  }

 private:
  struct Candidate {
    int index;
    Path path;
  };

  bool extend() {
    if (--budget_ < 0) return false;
    const int last = endpoints_[order_.back()];
    if (order_.size() == endpoints_.size()) {
      Path back;
      if (!residual_->find(last, endpoints_[0], s_, &back)) return false;
      residual_->take(back, s_);
      paths_.push_back(back);
      return true;
    }
    std::vector<Candidate> candidates;
    for (size_t i = 0; i < endpoints_.size(); ++i) {
      Path path;
      if (!used_[i] && residual_->find(last, endpoints_[i], s_, &path)) {
        candidates.push_back({static_cast<int>(i), std::move(path)});
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](const Candidate& x, const Candidate& y) {
                       if (x.path.size() != y.path.size()) return x.path.size() < y.path.size();
                       return residual_->bottleneck(x.path) > residual_->bottleneck(y.path);
                     });
    for (const Candidate& c : candidates) {
      residual_->take(c.path, s_);
      used_[c.index] = 1;
      order_.push_back(c.index);
      paths_.push_back(c.path);
      if (extend()) return true;
      paths_.pop_back();
      order_.pop_back();
      used_[c.index] = 0;
      residual_->give(c.path, s_);
      if (budget_ < 0) return false;
    }
    return false;
  }

  const std::vector<int>& endpoints_;
  Residual* residual_;
  double s_;
  int budget_ = 0;
  std::vector<int> order_;
  std::vector<Path> paths_;
  std::vector<char> used_;
};

// The ring `order` reversed, at speed s, if every hop fits; gives back on failure.
bool reversed(const std::vector<int>& order, Residual* residual, double s, Ring* ring) {
  ring->order.assign(order.rbegin(), order.rend());
  ring->hopLinks.clear();
  ring->gbps = s;
  std::vector<Path> taken;
  for (size_t i = 0; i < ring->order.size(); ++i) {
    Path path;
    int from = ring->order[i], to = ring->order[(i + 1) % ring->order.size()];
    if (!residual->find(from, to, s, &path)) {
      for (const Path& p : taken) residual->give(p, s);
      return false;
    }
    residual->take(path, s);
    taken.push_back(path);
    ring->hopLinks.push_back(linksOf(path));
  }
  return true;
}

// Grows one tree from endpoints[root]; on failure gives back what it took.
bool findTree(const std::vector<int>& endpoints, int root, int maxChildren, Residual* residual,
              double s, Tree* tree) {
  const size_t n = endpoints.size();
  tree->parent.assign(n, -1);
  tree->edgeLinks.assign(n, {});
  tree->root = root;
  tree->gbps = s;
  std::vector<char> attached(n, 0);
  std::vector<int> children(n, 0);
  std::vector<Path> taken;
  attached[root] = 1;
  for (size_t placed = 1; placed < n; ++placed) {
    int bestChild = -1, bestParent = -1;
    Path bestUp, bestDown;
    for (size_t u = 0; u < n; ++u) {
      if (attached[u]) continue;
      for (size_t v = 0; v < n; ++v) {
        if (!attached[v] || children[v] >= maxChildren) continue;
        Path up, down;
        if (!residual->find(endpoints[u], endpoints[v], s, &up)) continue;
        residual->take(up, s);  // so that a shared link must carry both directions' s
        bool ok = residual->find(endpoints[v], endpoints[u], s, &down);
        residual->give(up, s);
        if (!ok) continue;
        if (bestChild < 0 || up.size() + down.size() < bestUp.size() + bestDown.size()) {
          bestChild = static_cast<int>(u);
          bestParent = static_cast<int>(v);
          bestUp = up;
          bestDown = down;
        }
      }
    }
    if (bestChild < 0) {
      for (const Path& path : taken) residual->give(path, s);
      return false;
    }
    residual->take(bestUp, s);
    residual->take(bestDown, s);
    taken.push_back(bestUp);
    taken.push_back(bestDown);
    attached[bestChild] = 1;
    children[bestParent]++;
    tree->parent[bestChild] = bestParent;
    tree->edgeLinks[bestChild] = linksOf(bestUp);
  }
  return true;
}

std::vector<double> candidateSpeeds(const HostKind& host, int maxChannels, bool nvlinkOnly) {
  std::set<double, std::greater<double>> speeds;
  for (const Link& link : host.links) {
    if (nvlinkOnly && link.type != LinkType::kNvLink) continue;
    for (int k = 1; k <= maxChannels; ++k) speeds.insert(link.gbps / k);
  }
  return {speeds.begin(), speeds.end()};
}

// Packs channels at each candidate speed with `packOne`; keeps the fewest channels that
// reach options.nearBest of the best total.
template <typename T, typename PackOne>
std::vector<T> bestPacking(const HostKind& host, const SearchOptions& options, bool nvlinkOnly,
                           PackOne packOne) {
  std::vector<std::vector<T>> packings;
  double best = 0;
  for (double s : candidateSpeeds(host, options.maxChannels, nvlinkOnly)) {
    Residual residual(host, nvlinkOnly);
    std::vector<T> found;
    T channel;
    while (static_cast<int>(found.size()) < options.maxChannels &&
           packOne(&residual, s, static_cast<int>(found.size()), &channel)) {
      found.push_back(channel);
    }
    best = std::max(best, s * static_cast<double>(found.size()));
    packings.push_back(std::move(found));
  }
  const std::vector<T>* chosen = nullptr;
  for (const std::vector<T>& p : packings) {
    double total = p.empty() ? 0 : p.front().gbps * static_cast<double>(p.size());
    if (p.empty() || total + kEpsilon < options.nearBest * best) continue;
    if (chosen == nullptr || p.size() < chosen->size()) chosen = &p;
  }
  return chosen ? *chosen : std::vector<T>{};
}

template <typename T>
double totalOf(const std::vector<T>& channels) {
  double sum = 0;
  for (const T& c : channels) sum += c.gbps;
  return sum;
}

// Chains (one child each) and binary trees; the larger total wins, binary on a tie
// (shallower). Roots rotate over the channels to spread the interior load.
std::vector<Tree> packTrees(const HostKind& host, const std::vector<int>& endpoints,
                            const SearchOptions& options, bool nvlinkOnly) {
  const int n = static_cast<int>(endpoints.size());
  std::vector<Tree> best;
  for (int maxChildren : {2, 1}) {
    std::vector<Tree> trees =
        bestPacking<Tree>(host, options, nvlinkOnly, [&](Residual* r, double s, int c, Tree* out) {
          return findTree(endpoints, c % n, maxChildren, r, s, out);
        });
    if (totalOf(trees) > totalOf(best) * (1 + kEpsilon)) best = std::move(trees);
  }
  return best;
}

}  // namespace

double Channels::ringGBps() const {
  double sum = 0;
  for (const Ring& ring : rings) sum += ring.gbps;
  return sum;
}

double Channels::treeGBps() const {
  double sum = 0;
  for (const Tree& tree : trees) sum += tree.gbps;
  return sum;
}

Channels searchChannels(const HostKind& host, const SearchOptions& options) {
  const std::vector<int> endpoints = host.endpoints();
  Channels channels;
  if (endpoints.size() <= 1) {
    Ring ring;
    ring.order = endpoints;
    ring.hopLinks.assign(endpoints.size(), {});
    channels.rings.push_back(ring);
    Tree tree;
    tree.parent.assign(endpoints.size(), -1);
    tree.edgeLinks.assign(endpoints.size(), {});
    channels.trees.push_back(tree);
    return channels;
  }
  // GPUs joined by NVLink talk over NVLink only: a channel through PCIe and the CPUs would
  // add a little bandwidth on paper but share those links with NICs and storage.
  bool anyNvLink = false;
  for (const Link& link : host.links) anyNvLink = anyNvLink || link.type == LinkType::kNvLink;
  for (bool nvlinkOnly : {true, false}) {
    if (nvlinkOnly && !anyNvLink) continue;
    if (channels.rings.empty()) {
      // After each new ring, try the same ring reversed: it uses the other direction of
      // every link, which the forward ring left untouched (this packs the DGX-1 mesh).
      std::vector<int> lastOrder;
      channels.rings = bestPacking<Ring>(
          host, options, nvlinkOnly, [&](Residual* r, double s, int c, Ring* out) {
            if (c == 0) lastOrder.clear();
            if (!lastOrder.empty() && reversed(lastOrder, r, s, out)) {
              lastOrder.clear();
              return true;
            }
            if (!RingFinder(endpoints, r, s).find(out)) return false;
            lastOrder = out->order;
            return true;
          });
    }
    if (channels.trees.empty()) channels.trees = packTrees(host, endpoints, options, nvlinkOnly);
  }
  return channels;
}

bool ringUsesOnly(const HostKind& host, const Ring& ring, LinkType type) {
  for (const std::vector<int>& hop : ring.hopLinks) {
    for (int link : hop) {
      if (host.links[link].type != type) return false;
    }
  }
  return true;
}

std::vector<int> hostLocalRingOrder(const std::vector<int>& hostOfRank,
                                    const std::vector<int>& domainOfRank) {
  // A host's place is its lowest rank, and a domain's its lowest rank on that host;
  // a stable sort keeps rank order inside a domain.
  const bool byDomain = domainOfRank.size() == hostOfRank.size();
  std::map<int, int> firstRankOfHost;
  std::map<std::pair<int, int>, int> firstRankOfDomain;
  const auto domainKey = [&](size_t r) {
    return std::make_pair(hostOfRank[r], byDomain ? domainOfRank[r] : 0);
  };
  for (size_t r = 0; r < hostOfRank.size(); ++r) {
    firstRankOfHost.emplace(hostOfRank[r], static_cast<int>(r));
    firstRankOfDomain.emplace(domainKey(r), static_cast<int>(r));
  }
  std::vector<int> order(hostOfRank.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
    return std::make_pair(firstRankOfHost[hostOfRank[x]], firstRankOfDomain[domainKey(x)]) <
           std::make_pair(firstRankOfHost[hostOfRank[y]], firstRankOfDomain[domainKey(y)]);
  });
  return order;
}

std::string describeRing(const HostKind& host, const Ring& ring) {
  if (ring.order.size() == 1) {
    return host.nodes[ring.order[0]].name + "  (one endpoint: its ranks share its memory)";
  }
  std::string text;
  std::set<std::string> types;
  for (size_t i = 0; i < ring.order.size(); ++i) {
    text += host.nodes[ring.order[i]].name + " -> ";
    for (int link : ring.hopLinks[i]) types.insert(linkTypeName(host.links[link].type));
  }
  if (!ring.order.empty()) text += host.nodes[ring.order[0]].name;
  char speed[64];
  std::snprintf(speed, sizeof(speed), "  (%.4g GB/s;", ring.gbps);
  text += speed;
  for (const std::string& t : types) text += " " + t;
  return text + ")";
}

std::string describeTree(const HostKind& host, const Tree& tree) {
  const std::vector<int> endpoints = host.endpoints();
  if (endpoints.size() == 1) return host.nodes[endpoints[0]].name + "  (one endpoint)";
  std::string text = "root " + host.nodes[endpoints[tree.root]].name + ":";
  for (size_t i = 0; i < tree.parent.size(); ++i) {
    if (tree.parent[i] < 0) continue;
    text += " " + host.nodes[endpoints[i]].name + "->" + host.nodes[endpoints[tree.parent[i]]].name;
  }
  char speed[48];
  std::snprintf(speed, sizeof(speed), "  (%.4g GB/s)", tree.gbps);
  return text + speed;
}

}  // namespace braid::topo
