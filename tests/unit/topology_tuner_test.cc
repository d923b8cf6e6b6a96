// The cost model's shapes (hand-counted from each algorithm's schedule), the
// calibration fit (it must recover known constants from exact samples), the tuner's
// choice, and automatic selection's properties: same on every rank, never an
// algorithm that declines the arguments, faithful to the built-in rule where the
// model has no clear case.
#include <gtest/gtest.h>

#include <cmath>

#include "collectives/select.h"
#include "topology/calibration.h"
#include "topology/tuner.h"

namespace braid::topo {
namespace {

using coll::CollKind;

TEST(TopologyCostModelTest, ShapesCountStepsAndBytesOfTheSchedules) {
  const double s = 1 << 20;
  auto shape = [&](CollKind kind, const char* algo, int n) {
    std::optional<Shape> sh = shapeOf(kind, algo, n, s);
    EXPECT_TRUE(sh.has_value()) << algo;
    return sh.value_or(Shape{-1, -1});
  };
  // Ring all-reduce on 4 ranks: 3 reduce-scatter + 3 all-gather steps, 2*3/4 of the buffer.
  EXPECT_DOUBLE_EQ(shape(CollKind::kAllReduce, "ring", 4).steps, 6);
  EXPECT_DOUBLE_EQ(shape(CollKind::kAllReduce, "ring", 4).wireBytes, 1.5 * s);
  // Recursive doubling: 8 ranks = 3 exchanges; 7 ranks fold into 4: 1 + 2 + 1 steps.
  EXPECT_DOUBLE_EQ(shape(CollKind::kAllReduce, "rd", 8).steps, 3);
  EXPECT_DOUBLE_EQ(shape(CollKind::kAllReduce, "rd", 7).steps, 4);
  EXPECT_DOUBLE_EQ(shape(CollKind::kAllReduce, "rd", 7).wireBytes, 4 * s);
  EXPECT_DOUBLE_EQ(shape(CollKind::kAllReduce, "tree", 5).steps, 6);  // 2 * ceil(log2 5)
  EXPECT_DOUBLE_EQ(shape(CollKind::kBroadcast, "ring", 8).steps, 7);
  EXPECT_DOUBLE_EQ(shape(CollKind::kBroadcast, "tree", 8).steps, 3);
  EXPECT_DOUBLE_EQ(shape(CollKind::kAllToAll, "ring", 4).wireBytes, 1.5 * s);
  EXPECT_DOUBLE_EQ(shape(CollKind::kAllGather, "ring", 1).steps, 0);
  EXPECT_FALSE(shapeOf(CollKind::kAllGather, "tree", 4, s).has_value());
  EXPECT_DOUBLE_EQ(reportedSize(CollKind::kAllGather, 100, 4), 400);
  EXPECT_DOUBLE_EQ(reportedSize(CollKind::kAllReduce, 100, 4), 100);
}

std::vector<Sample> exactSamples(const CostParams& params, int cores) {
  std::vector<Sample> samples;
  for (int n : {3, 4, 8}) {
    for (double size = 8; size <= (8 << 20); size *= 4) {
      Shape shape = *shapeOf(CollKind::kAllReduce, "ring", n, size);
      samples.push_back({"shm", CollKind::kAllReduce, "ring", n, size,
                         timeUs(shape, params) * oversubscription(n, cores)});
    }
  }
  return samples;
}

TEST(TopologyCalibrationTest, FitRecoversKnownConstants) {
  const CostParams truth{2.5, 1.75, 3.2};
  CostModel model = fitModel(exactSamples(truth, 2), 2);
  const CostParams* fitted = model.find(CollKind::kAllReduce, "ring", Protocol::kSimple, "shm");
  ASSERT_NE(fitted, nullptr);
  EXPECT_NEAR(fitted->overheadUs, truth.overheadUs, 1e-6 * truth.overheadUs);
  EXPECT_NEAR(fitted->stepUs, truth.stepUs, 1e-6 * truth.stepUs);
  EXPECT_NEAR(fitted->gbps, truth.gbps, 1e-6 * truth.gbps);
  FitReport report = evaluate(model, exactSamples(truth, 2), 2);
  EXPECT_LT(report.p90RelError, 1e-6);
}

TEST(TopologyCalibrationTest, FitKeepsConstantsNonNegative) {
  // Times that fall with size cannot be fitted with a positive bandwidth term.
  std::vector<Sample> samples = {{"shm", CollKind::kBroadcast, "ring", 4, 8, 10},
                                 {"shm", CollKind::kBroadcast, "ring", 4, 1e6, 5},
                                 {"shm", CollKind::kBroadcast, "ring", 8, 8, 12}};
  CostModel model = fitModel(samples, 0);
  const CostParams* p = model.find(CollKind::kBroadcast, "ring", Protocol::kSimple, "shm");
  ASSERT_NE(p, nullptr);
  EXPECT_GE(p->overheadUs, 0);
  EXPECT_GE(p->stepUs, 0);
  EXPECT_GT(p->gbps, 0);
}

TEST(TopologyCalibrationTest, MalformedSamplesNameLineAndColumn) {
  struct Bad {
    const char* csv;
    const char* mentions;
  };
  for (const Bad& bad : {Bad{"link,collective,algorithm,nranks,size,us\nshm,allreduce,ring,4,8\n",
                             "line 2, column 0"},
                         Bad{"shm,allreduse,ring,4,8,1\n", "line 1, column 2"},
                         Bad{"shm,allreduce,ring,x,8,1\n", "column 4"},
                         Bad{"shm,allreduce,ring,4,8,-1\n", "column 6"},
                         Bad{"shm,allgather,tree,4,8,1\n", "column 3"}}) {
    Result<std::vector<Sample>> samples = parseSamples(bad.csv);
    ASSERT_FALSE(samples.isOk()) << bad.csv;
    EXPECT_NE(samples.status().message().find(bad.mentions), std::string::npos)
        << samples.status().message();
  }
}

TEST(TopologyTunerTest, FastestFollowsTheModel) {
  CostModel model({{CollKind::kAllReduce, "ring", Protocol::kSimple, "x", {0, 10, 10}},
                   {CollKind::kAllReduce, "rd", Protocol::kSimple, "x", {0, 1, 1}}});
  // 4 ranks: ring 6*10 us + 1.5*S/10e3; rd 2*1 us + 2*S/1e3. rd wins small, ring large.
  EXPECT_EQ(fastest(model, "x", CollKind::kAllReduce, 8, 4, {"ring", "rd"})->algorithm, "rd");
  EXPECT_EQ(fastest(model, "x", CollKind::kAllReduce, 1e6, 4, {"ring", "rd"})->algorithm, "ring");
  EXPECT_FALSE(fastest(model, "y", CollKind::kAllReduce, 8, 4, {"ring"}).has_value());
  EXPECT_EQ(fastest(model, "x", CollKind::kAllReduce, 8, 4, {"tree", "ring"})->algorithm, "ring");
}

coll::CollArgs args(CollKind kind, size_t count, int nranks, int rank) {
  coll::CollArgs a;
  a.kind = kind;
  a.count = count;
  a.nranks = nranks;
  a.rank = rank;
  a.type = braidFloat32;
  return a;
}

TEST(TopologyTunerTest, SelectionIsTheSameOnEveryRankAndAlwaysSupported) {
  for (CollKind kind : {CollKind::kAllReduce, CollKind::kBroadcast, CollKind::kReduce,
                        CollKind::kAllToAll, CollKind::kGather}) {
    for (int n : {2, 3, 4, 7, 8, 16}) {
      for (size_t count = 1; count <= (4 << 20); count *= 8) {
        const std::string first = coll::defaultAlgorithm(args(kind, count, n, 0)).name;
        for (int rank = 1; rank < n; ++rank) {
          EXPECT_EQ(coll::defaultAlgorithm(args(kind, count, n, rank)).name, first);
        }
        coll::CollArgs maxArgs = args(kind, count, n, 0);
        maxArgs.op = braidMax;  // rd declines floating max: selection must not pick it
        const coll::Algorithm& picked = coll::defaultAlgorithm(maxArgs);
        EXPECT_TRUE(picked.supports == nullptr || picked.supports(maxArgs)) << picked.name;
      }
    }
  }
}

}  // namespace
}  // namespace braid::topo
