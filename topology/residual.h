// Residual capacity of a host's links during channel search (internal to search.cc).
//
// Each link has a capacity per direction; channels take from it hop by hop. find() is
// a breadth-first search for the fewest-hop path with at least s left on every hop,
// trying the neighbour with the most capacity left first (spreads load, keeps paths
// local). Only CPUs and switches forward traffic: a path never passes through another
// GPU or a NIC. With nvlinkOnly, only NVLink links are walked.
#pragma once

#include <algorithm>
#include <vector>

#include "topology/graph.h"

namespace braid::topo::search_detail {

constexpr double kCapacityEpsilon = 1e-9;

struct Step {
  int link;
  int dir;  // 0: link.a -> link.b, 1: link.b -> link.a
};
using Path = std::vector<Step>;

class Residual {
 public:
  // nvlinkOnly: GPU-to-GPU paths may use NVLink (and NVSwitches) only.
  Residual(const HostKind& host, bool nvlinkOnly) : host_(host), adj_(host.nodes.size()) {
    for (size_t i = 0; i < host.links.size(); ++i) {
      const Link& link = host.links[i];
      cap_[0].push_back(link.gbps);
      cap_[1].push_back(link.gbps);
      if (nvlinkOnly && link.type != LinkType::kNvLink) continue;
      adj_[link.a].push_back({static_cast<int>(i), 0});
      adj_[link.b].push_back({static_cast<int>(i), 1});
    }
  }

  double left(const Step& step) const { return cap_[step.dir][step.link]; }
  void take(const Path& path, double s) {
    for (const Step& step : path) cap_[step.dir][step.link] -= s;
  }
  void give(const Path& path, double s) {
    for (const Step& step : path) cap_[step.dir][step.link] += s;
  }

  // Fewest-hop path from -> to with at least s left on every hop; among neighbours,
  // the one with most capacity left is tried first. Only CPUs and switches forward.
  bool find(int from, int to, double s, Path* out) const {
    const int n = static_cast<int>(host_.nodes.size());
    std::vector<Step> via(n, Step{-1, 0});
    std::vector<char> seen(n, 0);
    std::vector<int> frontier = {from};
    seen[from] = 1;
    while (!frontier.empty() && !seen[to]) {
      std::vector<int> next;
      for (int node : frontier) {
        if (node != from && !forwards(node)) continue;
        std::vector<Step> steps = adj_[node];
        std::stable_sort(steps.begin(), steps.end(),
                         [&](const Step& x, const Step& y) { return left(x) > left(y); });
        for (const Step& step : steps) {
          const Link& link = host_.links[step.link];
          int peer = step.dir == 0 ? link.b : link.a;
          if (seen[peer] || left(step) + kCapacityEpsilon < s) continue;
          seen[peer] = 1;
          via[peer] = step;
          next.push_back(peer);
        }
      }
      frontier = std::move(next);
    }
    if (!seen[to]) return false;
    out->clear();
    for (int node = to; node != from;) {
      const Step& step = via[node];
      out->push_back(step);
      const Link& link = host_.links[step.link];
      node = step.dir == 0 ? link.a : link.b;
    }
    std::reverse(out->begin(), out->end());
    return true;
  }

  double bottleneck(const Path& path) const {
    double b = 1e300;
    for (const Step& step : path) b = std::min(b, left(step));
    return b;
  }

 private:
  bool forwards(int node) const {
    NodeType t = host_.nodes[node].type;
    return t == NodeType::kCpu || t == NodeType::kPciSwitch || t == NodeType::kNvSwitch;
  }

  const HostKind& host_;
  std::vector<double> cap_[2];
  std::vector<std::vector<Step>> adj_;
};

inline std::vector<int> linksOf(const Path& path) {
  std::vector<int> links;
  for (const Step& step : path) links.push_back(step.link);
  return links;
}

}  // namespace braid::topo::search_detail
