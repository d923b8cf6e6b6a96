// The hierarchical algorithms ("hier", "hiertree") run by the schedule simulator
// over many host layouts: equal and unequal ranks per host, one rank per host,
// one host, and ranks of a host spread non-contiguously. Results are checked
// against a double-precision reference from small integer inputs (exact in every
// type used; support/schedule_cases.h), bit for bit except float avg. Also
// checked: the bytes that cross host boundaries (the reason these algorithms
// exist), the default selection, and that a malformed host map falls back.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "collectives/algorithms/hierarchical.h"
#include "collectives/select.h"
#include "core/types.h"
#include "support/schedule_cases.h"
#include "support/schedule_simulator.h"

namespace braid::coll {
namespace {

using Layout = std::vector<int>;  // the host of every rank

const std::vector<Layout>& layouts() {
  static const std::vector<Layout> kLayouts = {
      {0, 0, 1, 1},                    // 2 hosts x 2, contiguous
      {0, 1, 0, 1},                    // 2 hosts x 2, interleaved
      {0, 0, 0, 1, 1, 2},              // 3 hosts, 3 + 2 + 1
      {0, 1, 2, 3},                    // one rank per host
      {0, 0, 0, 0},                    // one host, map given
      {0, 1, 1, 1, 2, 0, 2, 2},        // 3 hosts, 2 + 3 + 3, scattered
      {0, 0, 0, 0, 0, 1},              // 5 + 1
      {1, 1, 0, 0, 0},                 // host numbers not in rank order
      {0, 1, 2, 3, 0, 1, 2, 3, 0, 1},  // 4 hosts, round robin, 3 + 3 + 2 + 2
  };
  return kLayouts;
}

// describe, argsFor, inputOf and reducedInputs of a Case: support/schedule_cases.h.
using Case = testing::HostLayoutCase;

void runCase(const Case& c) {
  SCOPED_TRACE(describe(c));
  const int n = static_cast<int>(c.hosts.size());
  const size_t elem = typeSize(c.type);
  std::vector<testing::SimRank> ranks;
  for (int r = 0; r < n; ++r) {
    ranks.push_back(testing::makeSimRank(argsFor(c, r)));
    if (ranks[r].send() == nullptr) continue;
    for (size_t i = 0; i < c.count; ++i) {
      testing::setElement(c.type, ranks[r].send(), i, inputOf(c, r, i));
    }
  }
  std::vector<Schedule> built;
  Status status =
      testing::simulateCollective(ranks, c.algorithm, testing::Buffering::kRendezvous, &built);
  ASSERT_TRUE(status.isOk()) << status.message();
  ASSERT_EQ(built[0].algorithm, c.algorithm) << "the algorithm fell back";
  for (int r = 0; r < n; ++r) {
    const bool hasResult = c.kind != CollKind::kReduce || r == c.root;
    if (!hasResult) continue;
    for (size_t i = 0; i < c.count; ++i) {
      double want = c.kind == CollKind::kBroadcast ? inputOf(c, c.root, i) : reducedInputs(c, i);
      double got = testing::elementAt(c.type, ranks[r].recv(), i);
      if (c.op == braidAvg && c.type != braidInt32) {
        ASSERT_NEAR(got, want, 1e-5 * std::max(1.0, std::fabs(want)))
            << "rank " << r << " element " << i;
      } else {
        ASSERT_EQ(got, want) << "rank " << r << " element " << i;
      }
    }
  }
  if (c.kind == CollKind::kAllReduce) {
    for (int r = 1; r < n; ++r) {
      ASSERT_EQ(0, std::memcmp(ranks[0].recv(), ranks[r].recv(), c.count * elem)) << "rank " << r;
    }
  }
}

struct Variant {
  CollKind kind;
  const char* algorithm;
};
constexpr Variant kVariants[] = {{CollKind::kAllReduce, "hier"},
                                 {CollKind::kAllReduce, "hiertree"},
                                 {CollKind::kBroadcast, "hier"},
                                 {CollKind::kReduce, "hier"}};
using testing::TypeOp;
constexpr TypeOp kTypeOps[] = {{braidInt32, braidSum}, {braidFloat32, braidAvg},
                               {braidInt32, braidMax}, {braidFloat64, braidProd},
                               {braidInt32, braidAvg}, {braidFloat32, braidMin}};

TEST(HierarchicalScheduleTest, MatchesReferenceOnEveryLayout) {
  size_t variant = 0;
  for (const Layout& hosts : layouts()) {
    const int n = static_cast<int>(hosts.size());
    for (const Variant& v : kVariants) {
      for (size_t count : {size_t(1), size_t(7), size_t(131), size_t(1000)}) {
        for (size_t chunkBytes : {size_t(4), size_t(40), size_t(1) << 20}) {
          if (chunkBytes == 4 && count == 1000) continue;  // keeps the test fast
          for (bool inPlace : {false, true}) {
            const TypeOp& t = kTypeOps[variant++ % std::size(kTypeOps)];
            int root = static_cast<int>((count + variant) % n);
            runCase({v.kind, v.algorithm, hosts, count, chunkBytes, inPlace, t.type, t.op, root});
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

// Bytes each schedule sends from a rank to a rank of another host, summed over ranks.
size_t crossHostBytes(const Case& c) {
  size_t bytes = 0;
  for (int r = 0; r < static_cast<int>(c.hosts.size()); ++r) {
    Result<Schedule> s = buildSchedule(argsFor(c, r), c.algorithm);
    EXPECT_TRUE(s.isOk());
    if (!s.isOk()) return 0;
    for (const Step& step : s->steps) {
      for (const Action& a : step.actions) {
        if (a.kind == ActionKind::kSend && c.hosts[a.peer] != c.hosts[r]) bytes += a.src.bytes;
      }
    }
  }
  return bytes;
}

// The point of the hierarchy: with H hosts, an all-reduce of B bytes sends 2(H-1)B
// across hosts in all (2(H-1)/H B per host), a broadcast (H-1)B; the flat ring
// sends 2(n-1)/n B across each of the H host boundaries it crosses.
TEST(HierarchicalScheduleTest, KeepsTrafficInsideHosts) {
  const size_t count = 12 * 1024;  // divisible by every lane and part count used
  const size_t bytes = count * 4;
  for (const Layout& hosts : {Layout{0, 0, 1, 1}, Layout{0, 1, 0, 1}, Layout{0, 0, 0, 1, 1, 1},
                              Layout{0, 0, 1, 1, 2, 2}}) {
    const size_t h = static_cast<size_t>(hosts.back() + 1), n = hosts.size();
    Case c{CollKind::kAllReduce, "hier", hosts, count, 4096, false, braidFloat32, braidSum, 0};
    EXPECT_EQ(crossHostBytes(c), 2 * (h - 1) * bytes);
    c.algorithm = "hiertree";
    EXPECT_EQ(crossHostBytes(c), 2 * (h - 1) * bytes);
    // The flat ring groups each host's ranks (rank_order.h), so it crosses h boundaries.
    c.algorithm = "ring";
    EXPECT_EQ(crossHostBytes(c), h * 2 * (n - 1) * bytes / n);
    c = {CollKind::kBroadcast, "hier", hosts, count, 4096, false, braidFloat32, braidSum, 1};
    EXPECT_EQ(crossHostBytes(c), (h - 1) * bytes);
  }
}

TEST(HierarchicalScheduleTest, DefaultPicksHierForLargeMultiHostAllReduce) {
  auto pick = [](const Layout& hosts, size_t count) {
    Case c{CollKind::kAllReduce, "", hosts, count, 1 << 20, false, braidFloat32, braidSum, 0};
    CollArgs args = argsFor(c, 0);
    if (hosts.empty()) {
      args.nranks = 4;
      args.hosts = nullptr;
    }
    return std::string(defaultAlgorithm(args).name);
  };
  const size_t large = 1 << 20, small = 1024;
  EXPECT_EQ(pick({0, 0, 1, 1}, large), "hier");
  EXPECT_EQ(pick({0, 1, 1, 2, 2, 2}, large), "hier");
  EXPECT_NE(pick({0, 0, 1, 1}, small), "hier");  // latency-bound: rd / tree
  EXPECT_NE(pick({0, 1, 2, 3}, large), "hier");  // one rank per host: the ring is as good
  EXPECT_NE(pick({0, 0, 0, 0}, large), "hier");  // one host
  EXPECT_NE(pick({}, large), "hier");            // host map unknown
}

TEST(HierarchicalScheduleTest, MalformedHostMapFallsBack) {
  for (const Layout& hosts : {Layout{0, 2, 2, 0}, Layout{0, -1, 1, 1}, Layout{0, 1, 1}}) {
    Case c{
        CollKind::kAllReduce, "hier", {0, 0, 1, 1}, 64, 1 << 20, false, braidFloat32, braidSum, 0};
    CollArgs args = argsFor(c, 1);
    args.hosts = std::make_shared<const std::vector<int>>(hosts);
    EXPECT_FALSE(supportsHierarchical(args));
    EXPECT_FALSE(prefersHierarchicalAllReduce(args));
    Result<Schedule> s = buildSchedule(args, "hier");
    ASSERT_TRUE(s.isOk()) << s.status().message();
    EXPECT_NE(s->algorithm, "hier");
  }
}

TEST(HostLayoutTest, GroupsRanksByHostInRankOrder) {
  CollArgs args;
  args.nranks = 6;
  args.hosts = std::make_shared<const std::vector<int>>(std::vector<int>{1, 0, 1, 2, 0, 1});
  HostLayout layout = hostLayout(args);
  ASSERT_EQ(layout.numHosts(), 3);
  EXPECT_EQ(layout.ranksOf[0], (std::vector<int>{1, 4}));
  EXPECT_EQ(layout.ranksOf[1], (std::vector<int>{0, 2, 5}));
  EXPECT_EQ(layout.ranksOf[2], (std::vector<int>{3}));
  EXPECT_EQ(layout.localIndex, (std::vector<int>{0, 0, 1, 0, 1, 2}));
  EXPECT_EQ(layout.maxLocalRanks(), 3);
}

TEST(HostLayoutTest, GroupsAHostsRanksByCacheDomain) {
  CollArgs args;
  args.nranks = 7;
  args.hosts = std::make_shared<const std::vector<int>>(std::vector<int>{0, 0, 1, 0, 1, 0, 1});
  args.domains = std::make_shared<const std::vector<int>>(std::vector<int>{1, 0, 5, 1, 5, 0, 2});
  HostLayout layout = hostLayout(args);
  ASSERT_EQ(layout.numHosts(), 2);
  EXPECT_EQ(layout.ranksOf[0], (std::vector<int>{0, 3, 1, 5}));  // domains by lowest rank
  EXPECT_EQ(layout.ranksOf[1], (std::vector<int>{2, 4, 6}));
  EXPECT_EQ(layout.localIndex, (std::vector<int>{0, 2, 0, 1, 1, 3, 2}));
  // A domain map of the wrong size is ignored.
  args.domains = std::make_shared<const std::vector<int>>(std::vector<int>{1, 0});
  EXPECT_EQ(hostLayout(args).ranksOf[0], (std::vector<int>{0, 1, 3, 5}));
}

}  // namespace
}  // namespace braid::coll
