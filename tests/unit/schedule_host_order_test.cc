// The flat schedules on multi-host layouts: rings, chains and trees follow the
// host-grouped orders of collectives/algorithms/rank_order.h.
//
// 1. Every registered algorithm, run by the schedule simulator on interleaved
//    (round-robin), blocked and uneven host layouts, matches a reference
//    computed here in double precision from small integer inputs (exact in the
//    types used), bit for bit except float avg; all-reduce results are bitwise
//    identical on every rank, also from inputs that do round.
// 2. Host crossings, counted from the built schedules' send actions and the
//    host map alone (not from rank_order.h): a ring crosses a host boundary
//    exactly H times in every step, a chain H - 1 times, and every algorithm
//    sends as many bytes across hosts on an interleaved layout as on the
//    blocked layout with the same hosts, so rank numbering no longer matters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collectives/algorithm.h"
#include "collectives/algorithms/rank_order.h"
#include "core/types.h"
#include "support/element_bits.h"
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

struct Case {
  CollKind kind;
  std::string algorithm;
  Layout hosts;
  size_t count;
  size_t chunkBytes;
  bool inPlace;
  braidDataType_t type;
  braidRedOp_t op;
  int root;
  bool roundingInputs = false;  // float32 inputs that sums round (determinism check)
};

std::string describe(const Case& c) {
  std::string layout;
  for (int h : c.hosts) layout += std::to_string(h);
  return std::string(collName(c.kind)) + "/" + c.algorithm + " hosts=" + layout +
         " count=" + std::to_string(c.count) + " chunk=" + std::to_string(c.chunkBytes) +
         (c.inPlace ? " in-place " : " ") + typeName(c.type) + " " + opName(c.op) +
         " root=" + std::to_string(c.root);
}

CollArgs argsFor(const Case& c, int rank) {
  CollArgs a;
  a.kind = c.kind;
  a.count = c.count;
  a.type = c.type;
  a.op = c.op;
  a.root = c.root;
  a.rank = rank;
  a.nranks = static_cast<int>(c.hosts.size());
  a.inPlace = c.inPlace;
  a.chunkBytes = c.chunkBytes;
  a.hosts = std::make_shared<const std::vector<int>>(c.hosts);
  if (c.kind == CollKind::kAllToAllv) {
    // Uneven blocks, some empty, packed without gaps.
    auto blockCount = [&](int from, int to) { return c.count * ((from + 2 * to) % 3) / 2; };
    size_t sendAt = 0, recvAt = 0;
    for (int j = 0; j < a.nranks; ++j) {
      a.sendCounts.push_back(blockCount(rank, j));
      a.sendDispls.push_back(sendAt);
      sendAt += a.sendCounts.back();
      a.recvCounts.push_back(blockCount(j, rank));
      a.recvDispls.push_back(recvAt);
      recvAt += a.recvCounts.back();
    }
  }
  return a;
}

// Element i of rank r's send buffer.
double input(const Case& c, int r, size_t i) {
  if (c.roundingInputs) return 0.1 * static_cast<double>((r * 13 + i * 7) % 17) + 1e-3 * r;
  if (c.op == braidProd) return ((r + i) % 3 == 0) ? 2 : ((r + i) % 3 == 1 ? 1 : -1);
  return static_cast<double>((r * 5 + i * 7) % 19) - 9 + (isFloatType(c.type) ? 0.25 : 0);
}

// Element i of a buffer of `type`, as a double, and the reverse (tests/support).
double get(braidDataType_t type, const uint8_t* p, size_t i) {
  return testing::rawToDouble(type, testing::loadRaw(type, p, i));
}

void put(braidDataType_t type, uint8_t* p, size_t i, double value) {
  testing::storeRaw(type, p, i, testing::doubleToRaw(type, value));
}

// Reduction over all ranks of element `at` of their send buffers, in rank order.
double reduced(const Case& c, size_t at) {
  const int n = static_cast<int>(c.hosts.size());
  double acc = input(c, 0, at);
  for (int r = 1; r < n; ++r) {
    const double v = input(c, r, at);
    if (c.op == braidProd) {
      acc *= v;
    } else if (c.op == braidMax) {
      acc = std::max(acc, v);
    } else if (c.op == braidMin) {
      acc = std::min(acc, v);
    } else {
      acc += v;
    }
  }
  if (c.op == braidAvg) {
    acc /= n;
    if (c.type == braidInt32) acc = std::trunc(acc);
  }
  return acc;
}

// What rank r's recv element i must hold; NaN where the collective leaves it undefined.
double expected(const Case& c, const std::vector<CollArgs>& args, int r, size_t i) {
  const size_t count = c.count;
  const size_t b = count == 0 ? 0 : i / count, k = count == 0 ? 0 : i % count;
  switch (c.kind) {
    case CollKind::kAllReduce:
      return reduced(c, i);
    case CollKind::kReduce:
      return reduced(c, i);
    case CollKind::kBroadcast:
      return input(c, c.root, i);
    case CollKind::kReduceScatter:
      return reduced(c, r * count + i);
    case CollKind::kScatter:
      return input(c, c.root, r * count + i);
    case CollKind::kAllGather:
    case CollKind::kGather:
      return input(c, static_cast<int>(b), k);
    case CollKind::kAllToAll:
      return input(c, static_cast<int>(b), r * count + k);
    case CollKind::kAllToAllv:
      for (size_t j = 0; j < args.size(); ++j) {
        const size_t at = args[r].recvDispls[j];
        if (i >= at && i < at + args[r].recvCounts[j]) {
          return input(c, static_cast<int>(j), args[j].sendDispls[r] + (i - at));
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
    for (size_t i = 0; i < inputs; ++i) put(c.type, ranks[r].send(), i, input(c, r, i));
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
      const double got = get(c.type, ranks[r].recv(), i);
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

struct TypeOp {
  braidDataType_t type;
  braidRedOp_t op;
};
constexpr TypeOp kTypeOps[] = {{braidInt32, braidSum},   {braidFloat64, braidProd},
                               {braidInt32, braidMax},   {braidInt32, braidAvg},
                               {braidFloat32, braidMin}, {braidFloat32, braidAvg}};

TEST(HostOrderScheduleTest, EveryAlgorithmMatchesReferenceOnEveryLayout) {
  size_t variant = 0;
  for (const Algorithm& algorithm : allAlgorithms()) {
    if (algorithm.kind == CollKind::kBarrier) continue;  // no data; counted below
    for (const Layout& hosts : layouts()) {
      const int n = static_cast<int>(hosts.size());
      for (size_t count : {size_t(1), size_t(7), size_t(131)}) {
        for (size_t chunkBytes : {size_t(40), size_t(1) << 20}) {
          for (bool inPlace : {false, true}) {
            const TypeOp& t = kTypeOps[variant++ % std::size(kTypeOps)];
            const int root = static_cast<int>((count + variant) % n);
            Case c = baseCase(algorithm.kind, algorithm.name, hosts, root);
            c.count = count;
            c.chunkBytes = chunkBytes;
            c.inPlace = inPlace;
            c.type = t.type;
            c.op = t.op;
            if (algorithm.supports != nullptr && !algorithm.supports(argsFor(c, 0))) continue;
            runCase(c);
            if (HasFatalFailure()) return;
          }
        }
      }
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
      Case grouped = baseCase(algorithm.kind, algorithm.name, hosts, 0);
      grouped.count = 1200;
      Case reference = grouped;
      reference.hosts = blocked(hosts);
      SCOPED_TRACE(describe(grouped));
      EXPECT_EQ(crossingBytes(grouped), crossingBytes(reference));
    }
  }
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
