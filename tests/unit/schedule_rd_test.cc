// Recursive-doubling all-reduce ("rd") in the schedule simulator: powers of
// two and the fold for every other rank count up to 9 (and 16), chunked and
// whole messages, in place and out of place, every type with sum, avg and
// the other ops rd accepts. Results are checked against the independent
// reference of support/reference.h and must be bit-identical on all ranks.
#include <gtest/gtest.h>

#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "collectives/algorithms/builders.h"
#include "collectives/select.h"
#include "core/types.h"
#include "support/reference.h"
#include "support/schedule_cases.h"
#include "support/schedule_simulator.h"

namespace braid::coll {
namespace {

using testing::SimRank;

struct RdCase {
  int nranks;
  size_t count;
  size_t chunkBytes;
  bool inPlace;
  braidDataType_t type;
  braidRedOp_t op;
};

std::string describe(const RdCase& c) {
  return "n=" + std::to_string(c.nranks) + " count=" + std::to_string(c.count) +
         " chunk=" + std::to_string(c.chunkBytes) + (c.inPlace ? " in-place " : " out-of-place ") +
         typeName(c.type) + " " + opName(c.op);
}

CollArgs argsFor(const RdCase& c, int rank) {
  CollArgs args;
  args.kind = CollKind::kAllReduce;
  args.count = c.count;
  args.type = c.type;
  args.op = c.op;
  args.rank = rank;
  args.nranks = c.nranks;
  args.inPlace = c.inPlace;
  args.chunkBytes = c.chunkBytes;
  return args;
}

void runCase(const RdCase& c, testing::Buffering buffering = testing::Buffering::kRendezvous) {
  SCOPED_TRACE(describe(c));
  const testing::InputPattern pattern(c.type, c.op, /*seed=*/c.nranks * 1000 + c.count);
  std::vector<SimRank> ranks;
  for (int r = 0; r < c.nranks; ++r) {
    ranks.push_back(testing::makeSimRank(argsFor(c, r)));
    pattern.fill(r, 0, c.count, ranks.back().send());
  }
  std::vector<Schedule> built;
  Status status = testing::simulateCollective(ranks, "rd", buffering, &built);
  ASSERT_TRUE(status.isOk()) << status.message();
  ASSERT_EQ(built[0].algorithm, "rd");

  const size_t bytes = c.count * typeSize(c.type);
  for (int r = 0; r < c.nranks; ++r) {
    std::string mismatch = testing::checkReduced(c.type, c.op, c.nranks, ranks[r].recv(), c.count,
                                                 testing::sourceFromPattern(pattern), 0);
    ASSERT_EQ(mismatch, "") << "rank " << r;
    ASSERT_EQ(0, std::memcmp(ranks[0].recv(), ranks[r].recv(), bytes))
        << "rank " << r << " differs from rank 0 bitwise";
  }
}

using testing::TypeOp;

TEST(RecursiveDoublingTest, MatchesReferenceOverGrid) {
  static const TypeOp kTypeOps[] = {
      {braidFloat32, braidSum}, {braidFloat16, braidSum}, {braidBfloat16, braidAvg},
      {braidFloat32, braidAvg}, {braidFloat16, braidAvg}, {braidFloat64, braidProd},
      {braidInt32, braidAvg},   {braidInt8, braidMax},    {braidUint8, braidMin},
      {braidInt64, braidSum},   {braidFloat64, braidAvg}, {braidUint32, braidProd},
  };
  size_t variant = 0;
  for (int nranks : {1, 2, 3, 4, 5, 6, 7, 8, 9, 16}) {
    for (size_t count : {size_t(1), size_t(5), size_t(131)}) {
      for (size_t chunkBytes : {size_t(1), size_t(40), size_t(1) << 20}) {
        for (bool inPlace : {false, true}) {
          for (int k = 0; k < 2; ++k, ++variant) {
            const TypeOp& t = kTypeOps[variant % std::size(kTypeOps)];
            runCase(RdCase{nranks, count, chunkBytes, inPlace, t.type, t.op});
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

TEST(RecursiveDoublingTest, EveryTypeWithSumAndAvg) {
  for (int t = 0; t < braidNumTypes; ++t) {
    for (braidRedOp_t op : {braidSum, braidAvg}) {
      for (int nranks : {3, 4, 6}) {
        for (bool inPlace : {false, true}) {
          runCase(RdCase{nranks, 37, 16, inPlace, static_cast<braidDataType_t>(t), op});
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

// A buffering connector lets sends finish early; results must not change.
TEST(RecursiveDoublingTest, MatchesReferenceWithBufferingConnectors) {
  for (int nranks : {3, 5, 8}) {
    for (bool inPlace : {false, true}) {
      runCase(RdCase{nranks, 131, 40, inPlace, braidFloat16, braidAvg}, testing::Buffering::kEager);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// The point of rd: log2(n) steps in sequence, plus fold and unfold otherwise.
TEST(RecursiveDoublingTest, TakesLogarithmicSteps) {
  struct Want {
    int nranks, rank;
    size_t steps;
  };
  for (const Want& want : {Want{2, 1, 1}, Want{8, 5, 3}, Want{16, 0, 4},
                           Want{5, 0, 2},     // extra rank: send, then receive the result
                           Want{5, 1, 4},     // its partner: fold, 2 rounds, unfold
                           Want{5, 4, 2}}) {  // a rank without a partner
    CollArgs args =
        argsFor(RdCase{want.nranks, 10, 1 << 20, false, braidFloat32, braidSum}, want.rank);
    Schedule schedule = buildRecursiveDoublingAllReduce(args);
    EXPECT_EQ(schedule.steps.size(), want.steps) << "n=" << want.nranks << " rank " << want.rank;
  }
}

// Floating min/max are not bitwise commutative (-0 vs +0), so rd declines them.
TEST(RecursiveDoublingTest, DeclinesFloatingMinMax) {
  for (braidRedOp_t op : {braidMax, braidMin}) {
    CollArgs args = argsFor(RdCase{4, 10, 1 << 20, false, braidFloat32, op}, 0);
    EXPECT_FALSE(supportsRecursiveDoublingAllReduce(args));
    Result<Schedule> schedule = buildSchedule(args, "rd");
    ASSERT_TRUE(schedule.isOk());
    EXPECT_NE(schedule->algorithm, "rd");
    args.type = braidInt32;
    EXPECT_TRUE(supportsRecursiveDoublingAllReduce(args));
  }
}

}  // namespace
}  // namespace braid::coll
