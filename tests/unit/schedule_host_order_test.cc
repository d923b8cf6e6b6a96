// The flat schedules on multi-host layouts: rings, chains and trees follow the
// host-grouped orders of collectives/algorithms/rank_order.h.
//
// 1. Every registered algorithm, run by the schedule simulator on interleaved
//    (round-robin), blocked and uneven host layouts, matches a double-precision
//    reference from small integer inputs (exact in the types used;
//    support/schedule_cases.h), bit for bit except float avg; all-reduce results
//    are bitwise identical on every rank, also from inputs that do round.
// 2. Host crossings, counted from the built schedules' send actions and the
//    host map alone (not from rank_order.h): a ring crosses a host boundary
//    exactly H times in every step, a chain H - 1 times, and every algorithm
//    sends as many bytes across hosts on an interleaved layout as on the
//    blocked layout with the same hosts, so rank numbering no longer matters.
// 3. Cache domains inside a host (CollArgs::domains): every algorithm still
//    matches the reference, and a ring crosses each domain boundary once (H
//    hosts, D domains in all: D crossings between domains), counted the same way.
// 4. The hierarchical algorithms with domains: they match the reference on multi-host
//    layouts, the in-host rings of "hier" cross into each (host, domain) place once, and
//    the in-host trees cross domains less often than over plain rank order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collectives/algorithms/rank_order.h"
#include "collectives/select.h"
#include "core/types.h"
#include "support/schedule_cases.h"
#include "support/schedule_simulator.h"

namespace braid::coll {
namespace {

using Layout = std::vector<int>;  // the host of every rank

const std::vector<Layout>& layouts() {
  static const std::vector<Layout> kLayouts = {
      {0},                             // one rank
      {0, 1},                          // two hosts, one rank each
      {0, 1, 0, 1},                    // interleaved 2 x 2
      {0, 1, 2, 0, 1, 2},              // interleaved 3 x 2
      {0, 1, 0, 1, 0, 1, 0, 1},        // interleaved 2 x 4
      {0, 0, 1, 1},                    // blocked 2 x 2
      {0, 0, 0, 1, 1, 1},              // blocked 2 x 3
      {0, 0, 0, 1, 1, 2},              // uneven, blocked
      {0, 1, 1, 1, 2, 0, 2, 2},        // uneven, scattered
      {0, 1, 2, 3, 0, 1, 2, 3, 0, 1},  // uneven round robin, 3 + 3 + 2 + 2
      {1, 1, 0, 0, 0},                 // host numbers not in rank order
      {0, 0, 0},                       // one host, map given
  };
  return kLayouts;
}

int hostCount(const Layout& hosts) { return *std::max_element(hosts.begin(), hosts.end()) + 1; }

// describe, argsFor, inputOf and reducedInputs of a Case: support/schedule_cases.h.
using Case = testing::HostLayoutCase;

// What rank r's recv element i must hold; NaN where the collective leaves it undefined.
double expected(const Case& c, const std::vector<CollArgs>& args, int r, size_t i) {
  const size_t count = c.count;
  const size_t b = count == 0 ? 0 : i / count, k = count == 0 ? 0 : i % count;
  switch (c.kind) {
    case CollKind::kAllReduce:
      return reducedInputs(c, i);
    case CollKind::kReduce:
      return reducedInputs(c, i);
    case CollKind::kBroadcast:
      return inputOf(c, c.root, i);
    case CollKind::kReduceScatter:
      return reducedInputs(c, r * count + i);
    case CollKind::kScatter:
      return inputOf(c, c.root, r * count + i);
    case CollKind::kAllGather:
    case CollKind::kGather:
      return inputOf(c, static_cast<int>(b), k);
    case CollKind::kAllToAll:
      return inputOf(c, static_cast<int>(b), r * count + k);
    case CollKind::kAllToAllv:
      for (size_t j = 0; j < args.size(); ++j) {
        const size_t at = args[r].recvDispls[j];
        if (i >= at && i < at + args[r].recvCounts[j]) {
          return inputOf(c, static_cast<int>(j), args[j].sendDispls[r] + (i - at));
        }
      }
      return NAN;
    case CollKind::kBarrier:
      return NAN;
  }
  return NAN;
}

void runCase(const Case& c) {
  SCOPED_TRACE(describe(c));
  const int n = static_cast<int>(c.hosts.size());
  std::vector<CollArgs> args;
  std::vector<testing::SimRank> ranks;
  for (int r = 0; r < n; ++r) {
    args.push_back(argsFor(c, r));
    ranks.push_back(testing::makeSimRank(args[r]));
    const size_t inputs = sendBufferBytes(args[r]) / typeSize(c.type);
    for (size_t i = 0; i < inputs; ++i) {
      testing::setElement(c.type, ranks[r].send(), i, inputOf(c, r, i));
    }
  }
  std::vector<Schedule> built;
  Status status =
      testing::simulateCollective(ranks, c.algorithm, testing::Buffering::kRendezvous, &built);
  ASSERT_TRUE(status.isOk()) << status.message();
  ASSERT_EQ(built[0].algorithm, c.algorithm) << "the algorithm fell back";
  for (int r = 0; r < n; ++r) {
    const size_t outputs = recvBufferBytes(args[r]) / typeSize(c.type);
    for (size_t i = 0; i < outputs; ++i) {
      const double want = expected(c, args, r, i);
      if (std::isnan(want)) continue;
      const double got = testing::elementAt(c.type, ranks[r].recv(), i);
      if (c.roundingInputs || (c.op == braidAvg && isFloatType(c.type))) {
        ASSERT_NEAR(got, want, 1e-5 * std::max(1.0, std::fabs(want)))
            << "rank " << r << " element " << i;
      } else {
        ASSERT_EQ(got, want) << "rank " << r << " element " << i;
      }
    }
  }
  if (c.kind == CollKind::kAllReduce) {
    const size_t bytes = c.count * typeSize(c.type);
    for (int r = 1; r < n; ++r) {
      ASSERT_EQ(0, std::memcmp(ranks[0].recv(), ranks[r].recv(), bytes))
          << "rank " << r << " differs from rank 0";
    }
  }
}

// 64 int32 elements summed, out of place, in one chunk; tests change what they vary.
Case baseCase(CollKind kind, const std::string& algorithm, const Layout& hosts, int root) {
  return Case{kind, algorithm, hosts, 64, 1 << 20, false, braidInt32, braidSum, root};
}

using testing::TypeOp;
constexpr TypeOp kTypeOps[] = {{braidInt32, braidSum},   {braidFloat64, braidProd},
                               {braidInt32, braidMax},   {braidInt32, braidAvg},
                               {braidFloat32, braidMin}, {braidFloat32, braidAvg}};

// Runs `algorithm` on `hosts` (and `domains`) over counts, chunk sizes and in/out of place,
// with the (type, op) pairs and roots in turn (`variant` carries the turn across calls).
void runVariants(const Algorithm& algorithm, const Layout& hosts, const Layout& domains,
                 std::initializer_list<size_t> counts, std::initializer_list<size_t> chunks,
                 size_t* variant) {
  const int n = static_cast<int>(hosts.size());
  for (size_t count : counts) {
    for (size_t chunkBytes : chunks) {
      for (bool inPlace : {false, true}) {
        const TypeOp& t = kTypeOps[(*variant)++ % std::size(kTypeOps)];
        Case c = baseCase(algorithm.kind, algorithm.name, hosts,
                          static_cast<int>((count + *variant) % n));
        c.domains = domains;
        c.count = count;
        c.chunkBytes = chunkBytes;
        c.inPlace = inPlace;
        c.type = t.type;
        c.op = t.op;
        if (algorithm.supports != nullptr && !algorithm.supports(argsFor(c, 0))) continue;
        runCase(c);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(HostOrderScheduleTest, EveryAlgorithmMatchesReferenceOnEveryLayout) {
  size_t variant = 0;
  for (const Algorithm& algorithm : allAlgorithms()) {
    if (algorithm.kind == CollKind::kBarrier) continue;  // no data; counted below
    for (const Layout& hosts : layouts()) {
      runVariants(algorithm, hosts, {}, {1, 7, 131}, {40, size_t(1) << 20}, &variant);
      if (HasFatalFailure()) return;
    }
  }
}

// Reduction order follows the ring now, so float sums round differently from rank
// order; every rank must still hold the same bits.
TEST(HostOrderScheduleTest, AllReduceIsBitwiseIdenticalOnEveryRank) {
  for (const char* algorithm : {"ring", "tree", "rd", "hier", "hiertree"}) {
    for (const Layout& hosts : layouts()) {
      for (bool inPlace : {false, true}) {
        Case c = baseCase(CollKind::kAllReduce, algorithm, hosts, 0);
        c.count = 1000;
        c.chunkBytes = 256;
        c.inPlace = inPlace;
        c.type = braidFloat32;
        c.roundingInputs = true;
        runCase(c);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Every send action of every rank's schedule: (step, from, to, bytes).
struct Send {
  size_t step;
  int from, to;
  size_t bytes;
};

std::vector<Send> sendsOf(const Case& c) {
  std::vector<Send> sends;
  for (int r = 0; r < static_cast<int>(c.hosts.size()); ++r) {
    Result<Schedule> s = buildSchedule(argsFor(c, r), c.algorithm);
    EXPECT_TRUE(s.isOk()) << s.status().message();
    if (!s.isOk()) return {};
    EXPECT_EQ(s->algorithm, c.algorithm);
    for (size_t step = 0; step < s->steps.size(); ++step) {
      for (const Action& a : s->steps[step].actions) {
        if (a.kind == ActionKind::kSend) sends.push_back({step, r, a.peer, a.src.bytes});
      }
    }
  }
  return sends;
}

// Distinct (from, to) pairs on different hosts.
int crossingLinks(const Case& c, const std::vector<Send>& sends) {
  std::set<std::pair<int, int>> links;
  for (const Send& s : sends) {
    if (c.hosts[s.from] != c.hosts[s.to]) links.insert({s.from, s.to});
  }
  return static_cast<int>(links.size());
}

// The most crossing sends in any one step. Step indices are each rank's own, but a ring's
// steps are in lockstep (every rank sends in every step), so per-step counts compare.
int maxCrossingsPerStep(const Case& c, const std::vector<Send>& sends) {
  std::map<size_t, std::set<std::pair<int, int>>> perStep;
  for (const Send& s : sends) {
    if (c.hosts[s.from] != c.hosts[s.to]) perStep[s.step].insert({s.from, s.to});
  }
  size_t most = 0;
  for (const auto& [step, links] : perStep) most = std::max(most, links.size());
  return static_cast<int>(most);
}

TEST(HostOrderScheduleTest, RingCrossesEachHostBoundaryOnce) {
  for (const Layout& hosts : layouts()) {
    const int h = hostCount(hosts), n = static_cast<int>(hosts.size());
    if (h < 2) continue;
    for (CollKind kind : {CollKind::kAllReduce, CollKind::kAllGather, CollKind::kReduceScatter,
                          CollKind::kAllToAll, CollKind::kBarrier}) {
      Case c = baseCase(kind, "ring", hosts, 0);
      SCOPED_TRACE(describe(c));
      std::vector<Send> sends = sendsOf(c);
      // A ring: each rank sends to exactly one peer, and those links form one cycle.
      std::map<int, std::set<int>> to;
      for (const Send& s : sends) to[s.from].insert(s.to);
      ASSERT_EQ(static_cast<int>(to.size()), n);
      int at = 0;
      for (int hop = 0; hop < n; ++hop) {
        ASSERT_EQ(to[at].size(), 1u) << "rank " << at << " sends to several peers";
        at = *to[at].begin();
        if (hop < n - 1) {
          ASSERT_NE(at, 0) << "the links close a cycle shorter than n";
        }
      }
      ASSERT_EQ(at, 0);
      EXPECT_EQ(crossingLinks(c, sends), h);
      EXPECT_EQ(maxCrossingsPerStep(c, sends), h);
    }
  }
}

TEST(HostOrderScheduleTest, ChainCrossesHostBoundariesOneFewerTimes) {
  for (const Layout& hosts : layouts()) {
    const int h = hostCount(hosts), n = static_cast<int>(hosts.size());
    for (CollKind kind :
         {CollKind::kBroadcast, CollKind::kReduce, CollKind::kGather, CollKind::kScatter}) {
      for (int root = 0; root < n; ++root) {
        Case c = baseCase(kind, "ring", hosts, root);
        SCOPED_TRACE(describe(c));
        EXPECT_EQ(crossingLinks(c, sendsOf(c)), h - 1);
      }
    }
  }
}

// The blocked layout with the hosts of `hosts` in index order and their rank counts.
Layout blocked(const Layout& hosts) {
  Layout sorted;
  for (int host = 0; host < hostCount(hosts); ++host) {
    for (int h : hosts) {
      if (h == host) sorted.push_back(host);
    }
  }
  return sorted;
}

size_t crossingBytes(const Case& c) {
  size_t bytes = 0;
  for (const Send& s : sendsOf(c)) bytes += c.hosts[s.from] != c.hosts[s.to] ? s.bytes : 0;
  return bytes;
}

// Rank 0 is the lowest rank of host 0 in both layouts, so with it as the root the
// grouped orders make the interleaved layout a renaming of the blocked one.
TEST(HostOrderScheduleTest, InterleavedLayoutsCrossAsLittleAsBlockedOnes) {
  for (const Layout& hosts :
       {Layout{0, 1, 0, 1}, Layout{0, 1, 2, 0, 1, 2}, Layout{0, 1, 0, 1, 0, 1, 0, 1},
        Layout{0, 1, 2, 3, 0, 1, 2, 3, 0, 1}, Layout{0, 1, 1, 1, 2, 0, 2, 2}}) {
    for (const Algorithm& algorithm : allAlgorithms()) {
      if (algorithm.kind == CollKind::kAllToAllv || std::string(algorithm.name) == "rd" ||
          std::string(algorithm.name) == "pairwise" ||
          std::string(algorithm.name) == "dissemination") {
        continue;  // partners by rank distance or bit: see docs/TOPOLOGY.md
      }
      // Every rank sends every other its whole input, on any layout; and 1200 elements are
      // past what it supports.
      if (std::string(algorithm.name) == "exchange") continue;
      Case grouped = baseCase(algorithm.kind, algorithm.name, hosts, 0);
      grouped.count = 1200;
      Case reference = grouped;
      reference.hosts = blocked(hosts);
      SCOPED_TRACE(describe(grouped));
      EXPECT_EQ(crossingBytes(grouped), crossingBytes(reference));
    }
  }
}

// Hosts and the cache domains inside them (numbers local to a host).
struct DomainLayout {
  Layout hosts, domains;
};
const std::vector<DomainLayout>& domainLayouts() {
  static const std::vector<DomainLayout> kLayouts = {
      {{0, 0, 0, 0}, {0, 1, 0, 1}},                          // one host, sockets alternate
      {{0, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 1, 0, 1, 0, 1}},  // 8 ranks on 2 sockets
      {{0, 0, 0, 0, 0, 0}, {2, 0, 1, 2, 0, 1}},              // 3 domains, numbers not in order
      {{0, 1, 0, 1, 0, 1, 0, 1}, {0, 0, 1, 1, 0, 0, 1, 1}},  // 2 hosts x 2 domains, interleaved
      {{0, 0, 0, 0, 0}, {-1, 0, -1, 0, -1}},                 // unknown domains form one group
  };
  return kLayouts;
}

TEST(DomainOrderScheduleTest, EveryAlgorithmMatchesReference) {
  size_t variant = 0;
  for (const Algorithm& algorithm : allAlgorithms()) {
    if (algorithm.kind == CollKind::kBarrier) continue;
    for (const DomainLayout& layout : domainLayouts()) {
      runVariants(algorithm, layout.hosts, layout.domains, {1, 131}, {40}, &variant);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(DomainOrderScheduleTest, RingCrossesEachDomainBoundaryOnce) {
  for (const DomainLayout& layout : domainLayouts()) {
    // A place is a (host, domain) pair; count crossings between places as between hosts.
    std::map<std::pair<int, int>, int> placeIndex;
    Layout places;
    for (size_t r = 0; r < layout.hosts.size(); ++r) {
      auto key = std::make_pair(layout.hosts[r], layout.domains[r]);
      places.push_back(placeIndex.emplace(key, static_cast<int>(placeIndex.size())).first->second);
    }
    for (CollKind kind : {CollKind::kAllReduce, CollKind::kAllGather, CollKind::kReduceScatter}) {
      Case c = baseCase(kind, "ring", layout.hosts, 0);
      c.domains = layout.domains;
      SCOPED_TRACE(describe(c));
      const std::vector<Send> sends = sendsOf(c);
      Case byPlace = c;
      byPlace.hosts = places;
      EXPECT_EQ(crossingLinks(byPlace, sends), static_cast<int>(placeIndex.size()));
      EXPECT_EQ(crossingLinks(c, sends), hostCount(layout.hosts) > 1 ? hostCount(layout.hosts) : 0);
    }
  }
}

// A place is a (host, domain) pair: every rank's place index, and how many places there are.
Layout placesOf(const DomainLayout& layout, int* count) {
  std::map<std::pair<int, int>, int> placeIndex;
  Layout places;
  for (size_t r = 0; r < layout.hosts.size(); ++r) {
    auto key = std::make_pair(layout.hosts[r], layout.domains[r]);
    places.push_back(placeIndex.emplace(key, static_cast<int>(placeIndex.size())).first->second);
  }
  *count = static_cast<int>(placeIndex.size());
  return places;
}

// Distinct (from, to) links inside one host between different places.
int inHostDomainCrossings(const DomainLayout& layout, const std::vector<Send>& sends) {
  int unused = 0;
  const Layout places = placesOf(layout, &unused);
  std::set<std::pair<int, int>> links;
  for (const Send& s : sends) {
    if (layout.hosts[s.from] == layout.hosts[s.to] && places[s.from] != places[s.to]) {
      links.insert({s.from, s.to});
    }
  }
  return static_cast<int>(links.size());
}

// Layouts for the hierarchical algorithms: several hosts, several domains on a host.
const std::vector<DomainLayout>& hierarchicalDomainLayouts() {
  static const std::vector<DomainLayout> kLayouts = {
      {{0, 1, 0, 1, 0, 1, 0, 1}, {0, 0, 1, 1, 0, 0, 1, 1}},  // 2 hosts x 2 domains, interleaved
      {{0, 0, 0, 0, 1, 1, 1, 1}, {0, 1, 0, 1, 1, 0, 1, 0}},  // blocked hosts, sockets alternate
      {{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},                 // 3 domains on host 0, 2 on host 1
       {2, 0, 1, 1, 0, 0, 2, 1, 1, 0, 0, 1}},
      {{0, 0, 1, 1, 1, 0, 0, 1}, {0, 1, 0, 0, 0, 0, 1, 0}},  // host 1 in one domain
      {{0, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 1, 0, 1, 0, 1}},  // one host
  };
  return kLayouts;
}

TEST(DomainOrderScheduleTest, HierarchicalAlgorithmsMatchReference) {
  size_t variant = 0;
  for (const Algorithm& algorithm : allAlgorithms()) {
    const std::string name = algorithm.name;
    if (name != "hier" && name != "hiertree") continue;
    for (const DomainLayout& layout : hierarchicalDomainLayouts()) {
      runVariants(algorithm, layout.hosts, layout.domains, {1, 7, 131}, {40, size_t(1) << 20},
                  &variant);
      if (HasFatalFailure()) return;
    }
  }
}

// The in-host rings of "hier" (phases 1 and 3) cross into each (host, domain) place once:
// a host with D > 1 domains has D links between its domains, one with a single domain none.
TEST(DomainOrderScheduleTest, HierarchicalInHostRingsCrossEachDomainOnce) {
  for (const DomainLayout& layout : hierarchicalDomainLayouts()) {
    std::map<int, std::set<int>> domainsOfHost;
    for (size_t r = 0; r < layout.hosts.size(); ++r) {
      domainsOfHost[layout.hosts[r]].insert(layout.domains[r]);
    }
    int want = 0;
    for (const auto& [host, domains] : domainsOfHost) {
      want += domains.size() > 1 ? static_cast<int>(domains.size()) : 0;
    }
    Case c = baseCase(CollKind::kAllReduce, "hier", layout.hosts, 0);
    c.domains = layout.domains;
    SCOPED_TRACE(describe(c));
    EXPECT_EQ(inHostDomainCrossings(layout, sendsOf(c)), want);
    // Without the domain map the same rings cross more often on these layouts.
    Case plain = c;
    plain.domains.clear();
    EXPECT_GT(inHostDomainCrossings(layout, sendsOf(plain)), want);
  }
}

// The in-host trees of "hier" broadcast / reduce and "hiertree" keep a domain's ranks in
// one stretch of the tree: fewer links between domains than over rank order, on these
// layouts where a host's domains alternate.
TEST(DomainOrderScheduleTest, HierarchicalTreesCrossDomainsLessThanInRankOrder) {
  for (const DomainLayout& layout : hierarchicalDomainLayouts()) {
    for (const auto& [kind, algorithm] :
         {std::make_pair(CollKind::kBroadcast, "hier"), std::make_pair(CollKind::kReduce, "hier"),
          std::make_pair(CollKind::kAllReduce, "hiertree")}) {
      for (int root = 0; root < static_cast<int>(layout.hosts.size()); root += 3) {
        Case c = baseCase(kind, algorithm, layout.hosts, root);
        c.domains = layout.domains;
        SCOPED_TRACE(describe(c));
        Case plain = c;
        plain.domains.clear();
        EXPECT_LT(inHostDomainCrossings(layout, sendsOf(c)),
                  inHostDomainCrossings(layout, sendsOf(plain)));
      }
    }
  }
}

TEST(RankOrderTest, GroupsADomainsRanksInsideEachHost) {
  auto orderOf = [](const Layout& hosts, const Layout& domains, int root) {
    CollArgs args;
    args.nranks = static_cast<int>(hosts.size());
    args.hosts = std::make_shared<const std::vector<int>>(hosts);
    args.domains = std::make_shared<const std::vector<int>>(domains);
    return std::make_pair(RankOrder::ring(args).ranks(), RankOrder::chain(args, root).ranks());
  };
  EXPECT_EQ(orderOf({0, 0, 0, 0}, {0, 1, 0, 1}, 0).first, (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(orderOf({0, 0, 0, 0}, {0, 1, 0, 1}, 3).second, (std::vector<int>{3, 0, 2, 1}));
  // Hosts first, then domains inside each; the root's host starts at the root.
  const auto [ring, chain] = orderOf({0, 1, 0, 1, 0, 1}, {0, 0, 1, 1, 0, 0}, 4);
  EXPECT_EQ(ring, (std::vector<int>{0, 4, 2, 1, 5, 3}));
  EXPECT_EQ(chain, (std::vector<int>{4, 2, 0, 1, 5, 3}));
  // A domain map of the wrong size is ignored.
  CollArgs args;
  args.nranks = 4;
  args.domains = std::make_shared<const std::vector<int>>(std::vector<int>{0, 1});
  EXPECT_EQ(RankOrder::ring(args).ranks(), (std::vector<int>{0, 1, 2, 3}));
}

TEST(RankOrderTest, GroupsRanksByHost) {
  auto ringOf = [](const Layout& hosts) {
    CollArgs args;
    args.nranks = static_cast<int>(hosts.size());
    args.hosts = std::make_shared<const std::vector<int>>(hosts);
    return RankOrder::ring(args).ranks();
  };
  auto chainOf = [](const Layout& hosts, int root) {
    CollArgs args;
    args.nranks = static_cast<int>(hosts.size());
    args.hosts = std::make_shared<const std::vector<int>>(hosts);
    return RankOrder::chain(args, root).ranks();
  };
  EXPECT_EQ(ringOf({0, 1, 0, 1}), (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(ringOf({0, 0, 1, 1}), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(ringOf({1, 1, 0, 0, 0}), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(chainOf({0, 1, 0, 1}, 2), (std::vector<int>{2, 0, 1, 3}));
  EXPECT_EQ(chainOf({0, 1, 2, 0, 1, 2}, 4), (std::vector<int>{4, 1, 2, 5, 0, 3}));
  // No map, or a malformed one (host 5 of 3 ranks): rank order, chains from the root.
  CollArgs plain;
  plain.nranks = 4;
  EXPECT_EQ(RankOrder::ring(plain).ranks(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(RankOrder::chain(plain, 2).ranks(), (std::vector<int>{2, 3, 0, 1}));
  EXPECT_EQ(chainOf({0, 5, 0}, 1), (std::vector<int>{1, 2, 0}));
  // Chain order with one host is the plain chain: schedules without hosts are unchanged.
  EXPECT_EQ(chainOf({0, 0, 0, 0}, 2), (std::vector<int>{2, 3, 0, 1}));
}

}  // namespace
}  // namespace braid::coll
