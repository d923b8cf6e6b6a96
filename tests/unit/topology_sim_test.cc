// braid-sim's model on the reference machines, against values derived by hand:
//  - one DGX H100: a ring all-reduce of a huge buffer runs at the ring bandwidth the
//    search finds (450 GB/s) times NVLink efficiency (0.82): busbw -> 369 GB/s;
//  - hosts joined by slow NICs: the hierarchical all-reduce (NVLink inside, NICs across)
//    beats the flat ring, whose every step waits on the network;
//  - busbw factors are nccl-tests'.
#include <gtest/gtest.h>

#include "topology/sim.h"
#include "topology/topo_file.h"

namespace braid::topo {
namespace {

Graph load(const std::string& name) {
  Result<Graph> graph = loadFile(std::string(BRAID_TOPOLOGY_REFERENCE_DIR) + "/" + name);
  EXPECT_TRUE(graph.isOk());
  return graph.isOk() ? *graph : Graph{};
}

Prediction of(const std::vector<Prediction>& all, const std::string& algorithm, Protocol p) {
  for (const Prediction& q : all) {
    if (q.algorithm == algorithm && q.protocol == p) return q;
  }
  ADD_FAILURE() << "no prediction for " << algorithm;
  return {};
}

TEST(TopologySimTest, SingleDgxH100RingApproachesNvLinkTimesEfficiency) {
  Result<ClusterSummary> c = summarize(load("dgx_h100.topo"), 8);
  ASSERT_TRUE(c.isOk());
  EXPECT_EQ(c->hosts, 1);
  EXPECT_DOUBLE_EQ(c->ringGBps, 450);
  Prediction ring =
      of(predictAll(*c, coll::CollKind::kAllReduce, 64.0 * (1 << 30)), "ring", Protocol::kSimple);
  EXPECT_NEAR(ring.busbw, 450 * 0.82, 1.0);
  EXPECT_NEAR(ring.busbw, ring.algbw * 2 * 7 / 8, 1e-9);
}

TEST(TopologySimTest, SmallMessagesPickLowLatencyProtocolsLargeOnesSimple) {
  Result<ClusterSummary> c = summarize(load("dgx_h100.topo"), 64);
  ASSERT_TRUE(c.isOk());
  EXPECT_EQ(predictBest(*c, coll::CollKind::kAllReduce, 8).protocol, Protocol::kLL);
  EXPECT_EQ(predictBest(*c, coll::CollKind::kAllReduce, 8.0 * (1 << 30)).protocol,
            Protocol::kSimple);
  // Latency-bound: the tree's log-depth beats the ring's 2(N-1) steps at 64 GPUs.
  EXPECT_EQ(predictBest(*c, coll::CollKind::kAllReduce, 8).algorithm, "tree");
}

TEST(TopologySimTest, HierarchicalBeatsFlatRingWhenNicsAreSlow) {
  Result<Graph> graph = parse(
      "braid-topology 1\nnetwork eth latency=10\nhost h count=4\n"
      "node cpu c0 numa=0 cores=8\nnode nvswitch sw\nnode nic n0 speed=1.25\n"
      "node gpu g0\nnode gpu g1\nnode gpu g2\nnode gpu g3\n"
      "link g0 sw nvlink 100\nlink g1 sw nvlink 100\nlink g2 sw nvlink 100\n"
      "link g3 sw nvlink 100\nlink c0 n0 pcie 12\n");
  ASSERT_TRUE(graph.isOk()) << graph.status().message();
  Result<ClusterSummary> c = summarize(*graph, 0);
  ASSERT_TRUE(c.isOk());
  std::vector<Prediction> all = predictAll(*c, coll::CollKind::kAllReduce, 1 << 30);
  EXPECT_LT(of(all, "hier", Protocol::kSimple).us, of(all, "ring", Protocol::kSimple).us);
}

TEST(TopologySimTest, ScalingErrorsAreClear) {
  Graph graph = load("dgx_h100.topo");
  Result<ClusterSummary> bad = summarize(graph, 12);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("12 GPUs"), std::string::npos);
  Result<Graph> cpuOnly = parse("braid-topology 1\nhost h\nnode cpu c0\n");
  ASSERT_TRUE(cpuOnly.isOk());
  EXPECT_FALSE(summarize(*cpuOnly, 0).isOk());
}

TEST(TopologySimTest, BusFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(busFactor(coll::CollKind::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busFactor(coll::CollKind::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busFactor(coll::CollKind::kBroadcast, 8), 1.0);
}

}  // namespace
}  // namespace braid::topo
