// The selection point (collectives/select.h): overrides parsed once and checked, the
// algorithm forced or chosen by the rule, the device protocol from BRAID_PROTO or the size,
// and both reaching the device executor's plans.
#include "collectives/select.h"

#include <gtest/gtest.h>

#include <string>

#include "collectives/device/group_plans.h"
#include "collectives/thresholds.h"

namespace braid::coll {
namespace {

Overrides parsed(const std::string& algorithm, const std::string& protocol) {
  Result<Overrides> o = Overrides::parse(algorithm, protocol);
  EXPECT_TRUE(o.isOk()) << o.status().message();
  return o.isOk() ? *o : Overrides{};
}

CollArgs allReduce(int nranks, size_t bytes) {
  CollArgs a;
  a.kind = CollKind::kAllReduce;
  a.type = braidFloat32;
  a.count = bytes / 4;
  a.nranks = nranks;
  return a;
}

TEST(OverridesTest, RejectsUnknownNamesNamingTheVariable) {
  Result<Overrides> algorithm = Overrides::parse("allreduce:ring,warp", "");
  ASSERT_FALSE(algorithm.isOk());
  EXPECT_EQ(algorithm.status().code(), braidInvalidArgument);
  EXPECT_NE(algorithm.status().message().find("BRAID_ALGO"), std::string::npos);
  EXPECT_NE(algorithm.status().message().find("'warp' names no algorithm"), std::string::npos);

  Result<Overrides> protocol = Overrides::parse("", "ll@0-4K,fast");
  ASSERT_FALSE(protocol.isOk());
  EXPECT_EQ(protocol.status().code(), braidInvalidArgument);
  EXPECT_NE(protocol.status().message().find("BRAID_PROTO"), std::string::npos);
  EXPECT_NE(protocol.status().message().find("'fast' names no protocol"), std::string::npos);

  EXPECT_FALSE(Overrides::parse("allreduce:", "").isOk());     // malformed: no choice
  EXPECT_FALSE(Overrides::parse("", "gather:ll@8-4").isOk());  // range upside down
}

TEST(SelectTest, NothingForcedIsTheDefaultAlgorithm) {
  const Overrides none;
  for (int n : {2, 3, 4, 8}) {
    for (size_t bytes : {size_t(8), size_t(64) << 10, size_t(16) << 20}) {
      const CollArgs a = allReduce(n, bytes);
      EXPECT_EQ(select(a, MemoryKind::kHost, none).algorithm, &defaultAlgorithm(a));
    }
  }
}

TEST(SelectTest, AForcedAlgorithmWinsWhereItRunsTheCall) {
  const Overrides tree = parsed("allreduce:tree@0-1M,ring;broadcast:ring", "");
  EXPECT_STREQ(select(allReduce(4, 64), MemoryKind::kHost, tree).algorithm->name, "tree");
  EXPECT_STREQ(select(allReduce(4, 2 << 20), MemoryKind::kHost, tree).algorithm->name, "ring");
  // A name the collective lacks selects automatically, as BRAID_ALGO documents.
  const Overrides pairwise = parsed("pairwise", "");
  const CollArgs a = allReduce(4, 64);
  EXPECT_EQ(select(a, MemoryKind::kHost, pairwise).algorithm, &defaultAlgorithm(a));
}

TEST(SelectTest, DeviceProtocolFollowsSizeOrBraidProto) {
  const size_t llMax = kThresholds.llMaxBytes;
  const Overrides none;
  EXPECT_EQ(select(allReduce(2, llMax), MemoryKind::kDevice, none).protocol, topo::Protocol::kLL);
  EXPECT_EQ(select(allReduce(2, llMax + 4), MemoryKind::kDevice, none).protocol,
            topo::Protocol::kSimple);
  const Overrides simple = parsed("", "simple");
  EXPECT_EQ(select(allReduce(2, 8), MemoryKind::kDevice, simple).protocol, topo::Protocol::kSimple);
  const Overrides ranged = parsed("", "allreduce:ll@0-1M,simple");
  EXPECT_EQ(select(allReduce(2, 1 << 20), MemoryKind::kDevice, ranged).protocol,
            topo::Protocol::kLL);
  EXPECT_EQ(select(allReduce(2, 2 << 20), MemoryKind::kDevice, ranged).protocol,
            topo::Protocol::kSimple);
  // The device executor has no LL128: the rule selects automatically.
  const Overrides ll128 = parsed("", "ll128");
  EXPECT_EQ(select(allReduce(2, 8), MemoryKind::kDevice, ll128).protocol, topo::Protocol::kLL);
  // Host connectors carry whole messages; BRAID_PROTO does not change them.
  EXPECT_EQ(select(allReduce(2, 8), MemoryKind::kHost, parsed("", "ll")).protocol,
            topo::Protocol::kSimple);
}

TEST(SelectTest, OverridesReachTheDevicePlans) {
  const CollArgs a = allReduce(4, 1 << 20);
  Result<device::GroupPlans> ring = device::planGroupCall(a, 2, parsed("allreduce:ring", "ll"));
  Result<device::GroupPlans> tree = device::planGroupCall(a, 2, parsed("allreduce:tree", "simple"));
  ASSERT_TRUE(ring.isOk()) << ring.status().message();
  ASSERT_TRUE(tree.isOk()) << tree.status().message();
  EXPECT_EQ(ring->protocol, device::Protocol::kLl);
  EXPECT_EQ(tree->protocol, device::Protocol::kSimple);
  // Each rank's plan is the forced algorithm's schedule, planned.
  for (const char* name : {"ring", "tree"}) {
    const device::GroupPlans& plans = std::string(name) == "ring" ? *ring : *tree;
    for (int r = 0; r < a.nranks; ++r) {
      CollArgs mine = a;
      mine.rank = r;
      mine.chunkBytes = size_t(1) << 62;  // as planGroupCall plans: one chunk per round
      Result<Schedule> schedule = buildSchedule(mine, *findAlgorithm(name, mine));
      ASSERT_TRUE(schedule.isOk());
      EXPECT_EQ(plans.scratchBytes[size_t(r)], schedule->scratchBytes) << name << " rank " << r;
      device::PlanBufferSizes sizes{sendBufferBytes(mine), recvBufferBytes(mine),
                                    schedule->scratchBytes, mine.inPlace};
      Result<device::DevicePlan> plan = device::buildDevicePlan(*schedule, sizes, 4, true);
      ASSERT_TRUE(plan.isOk());
      EXPECT_EQ(plans.ranks[size_t(r)].ops.size(), plan->ops.size()) << name << " rank " << r;
      EXPECT_EQ(plans.ranks[size_t(r)].stepStarts, plan->stepStarts) << name << " rank " << r;
    }
  }
  EXPECT_NE(ring->ranks[0].stepStarts, tree->ranks[0].stepStarts);  // they did differ
}

}  // namespace
}  // namespace braid::coll
