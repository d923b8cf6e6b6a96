// The exchange all-reduce and barrier ("exchange", the tiny path's schedule
// form) in the schedule simulator: 1 to 8 ranks, in place and out of place,
// every type with sum and avg and the other ops on a few types, against the
// independent reference of support/reference.h, bit-identical on all ranks;
// with connectors that hold every send until it is received (rendezvous) and
// with ones that buffer it. Its shape is what the direct tiny path sends: one
// message of the whole input to every peer, one step of traffic.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "collectives/algorithms/builders.h"
#include "core/types.h"
#include "support/reference.h"
#include "support/schedule_simulator.h"

namespace braid::coll {
namespace {

using testing::SimRank;

CollArgs argsFor(int nranks, int rank, size_t count, braidDataType_t type, braidRedOp_t op,
                 bool inPlace) {
  CollArgs args;
  args.kind = CollKind::kAllReduce;
  args.count = count;
  args.type = type;
  args.op = op;
  args.rank = rank;
  args.nranks = nranks;
  args.inPlace = inPlace;
  args.chunkBytes = size_t(1) << 20;  // the default; tiny messages travel whole
  return args;
}

void runCase(int nranks, size_t count, braidDataType_t type, braidRedOp_t op, bool inPlace,
             testing::Buffering buffering) {
  SCOPED_TRACE("n=" + std::to_string(nranks) + " count=" + std::to_string(count) + " " +
               typeName(type) + " " + opName(op) + (inPlace ? " in place" : ""));
  const testing::InputPattern pattern(type, op, /*seed=*/nranks * 100 + count);
  std::vector<SimRank> ranks;
  std::vector<Schedule> schedules;
  for (int r = 0; r < nranks; ++r) {
    ranks.push_back(testing::makeSimRank(argsFor(nranks, r, count, type, op, inPlace)));
    pattern.fill(r, 0, count, ranks.back().send());
    schedules.push_back(buildExchangeAllReduce(ranks.back().args));
  }
  ASSERT_TRUE(testing::checkMatching(schedules).isOk());
  Status status = testing::runSchedules(ranks, schedules, buffering);
  ASSERT_TRUE(status.isOk()) << status.message();
  const size_t bytes = count * typeSize(type);
  for (int r = 0; r < nranks; ++r) {
    ASSERT_EQ(testing::checkReduced(type, op, nranks, ranks[r].recv(), count,
                                    testing::sourceFromPattern(pattern), 0),
              "")
        << "rank " << r;
    ASSERT_EQ(std::memcmp(ranks[0].recv(), ranks[r].recv(), bytes), 0)
        << "rank " << r << " differs from rank 0 bitwise";
  }
}

TEST(ExchangeScheduleTest, EveryTypeWithSumAndAvg) {
  for (int t = 0; t < braidNumTypes; ++t) {
    for (braidRedOp_t op : {braidSum, braidAvg}) {
      for (int nranks : {1, 2, 3, 4, 8}) {
        for (bool inPlace : {false, true}) {
          runCase(nranks, 37, static_cast<braidDataType_t>(t), op, inPlace,
                  testing::Buffering::kRendezvous);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(ExchangeScheduleTest, OtherOpsAndBufferingConnectors) {
  for (braidRedOp_t op : {braidProd, braidMin, braidMax}) {
    for (braidDataType_t type : {braidFloat32, braidFloat16, braidInt8, braidUint64}) {
      for (int nranks : {2, 3, 5}) {
        for (bool inPlace : {false, true}) {
          runCase(nranks, 9, type, op, inPlace, testing::Buffering::kEager);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

// One round of traffic: every peer gets the whole input as one message and
// sends one back, all in the first step (the direct tiny path's messages).
TEST(ExchangeScheduleTest, OneMessageEachWayPerPeerInOneStep) {
  for (int nranks : {2, 4, 7}) {
    for (int rank = 0; rank < nranks; ++rank) {
      const Schedule s = buildExchangeAllReduce(
          argsFor(nranks, rank, 5, braidFloat32, braidSum, /*inPlace=*/true));
      ASSERT_EQ(s.algorithm, "exchange");
      std::vector<int> sends(nranks), recvs(nranks);
      for (size_t step = 0; step < s.steps.size(); ++step) {
        for (const Action& a : s.steps[step].actions) {
          if (a.kind != ActionKind::kSend && a.kind != ActionKind::kRecv) continue;
          EXPECT_EQ(step, 0u) << "rank " << rank << ": traffic after the first step";
          EXPECT_EQ((a.kind == ActionKind::kSend ? a.src : a.dst).bytes, 20u);
          ++(a.kind == ActionKind::kSend ? sends : recvs)[a.peer];
        }
      }
      for (int peer = 0; peer < nranks; ++peer) {
        EXPECT_EQ(sends[peer], peer == rank ? 0 : 1) << "rank " << rank << " to " << peer;
        EXPECT_EQ(recvs[peer], peer == rank ? 0 : 1) << "rank " << rank << " from " << peer;
      }
    }
  }
}

// A barrier: empty messages to and from every peer, nothing else.
TEST(ExchangeScheduleTest, BarrierIsOneRoundOfEmptyMessages) {
  for (int nranks : {2, 3, 8}) {
    std::vector<SimRank> ranks;
    std::vector<Schedule> schedules;
    for (int r = 0; r < nranks; ++r) {
      CollArgs args = argsFor(nranks, r, 0, braidUint8, braidSum, false);
      args.kind = CollKind::kBarrier;
      ranks.push_back(testing::makeSimRank(args));
      schedules.push_back(buildExchangeAllReduce(args));
      ASSERT_EQ(schedules.back().steps.size(), 1u);
      ASSERT_EQ(schedules.back().steps[0].actions.size(), size_t(2 * (nranks - 1)));
      for (const Action& a : schedules.back().steps[0].actions) {
        EXPECT_EQ((a.kind == ActionKind::kSend ? a.src : a.dst).bytes, 0u);
      }
    }
    Status status = testing::runSchedules(ranks, schedules, testing::Buffering::kRendezvous);
    EXPECT_TRUE(status.isOk()) << status.message();
  }
}

}  // namespace
}  // namespace braid::coll
