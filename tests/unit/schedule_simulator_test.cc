// The schedule simulator must reject every rule a broken schedule can break;
// otherwise the algorithm tests that rely on it could not fail.
#include "support/schedule_simulator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "collectives/algorithm.h"

namespace braid::testing {
namespace {

using coll::Action;
using coll::ActionKind;
using coll::BufferId;
using coll::CollArgs;
using coll::CollKind;
using coll::Schedule;
using coll::Span;

// Two ranks running an all-reduce of 4 int32s; tests hand-write the schedules.
std::vector<SimRank> twoRanks(size_t chunkBytes = 1 << 20) {
  std::vector<SimRank> ranks;
  for (int r = 0; r < 2; ++r) {
    CollArgs args;
    args.kind = CollKind::kAllReduce;
    args.count = 4;
    args.type = braidInt32;
    args.rank = r;
    args.nranks = 2;
    args.chunkBytes = chunkBytes;
    ranks.push_back(makeSimRank(args));
    for (int i = 0; i < 4; ++i) {
      int32_t v = 10 * r + i;
      std::memcpy(ranks.back().send() + 4 * i, &v, 4);
    }
  }
  return ranks;
}

Action send(int peer, Span src) { return Action{ActionKind::kSend, peer, Span{}, src, -1}; }
Action recv(int peer, Span dst, int after = -1) {
  return Action{ActionKind::kRecv, peer, dst, Span{}, after};
}
Action recvReduce(int peer, Span dst, Span src) {
  return Action{ActionKind::kRecvReduce, peer, dst, src, -1};
}
Span sendBuf(size_t offset, size_t bytes) { return Span{BufferId::kSend, offset, bytes}; }
Span recvBuf(size_t offset, size_t bytes) { return Span{BufferId::kRecv, offset, bytes}; }

Schedule of(std::vector<std::vector<Action>> steps) {
  Schedule schedule;
  for (auto& actions : steps) schedule.steps.push_back(coll::Step{actions});
  schedule.algorithm = "hand";
  return schedule;
}

int32_t recvInt(SimRank& rank, int i) {
  int32_t v;
  std::memcpy(&v, rank.recv() + 4 * i, 4);
  return v;
}

TEST(ScheduleSimulatorTest, RunsAnExchangeAndReduces) {
  std::vector<SimRank> ranks = twoRanks();
  std::vector<Schedule> schedules;
  for (int r = 0; r < 2; ++r) {
    schedules.push_back(
        of({{send(1 - r, sendBuf(0, 16)), recvReduce(1 - r, recvBuf(0, 16), sendBuf(0, 16))}}));
  }
  Status status = runSchedules(ranks, schedules);
  ASSERT_TRUE(status.isOk()) << status.message();
  for (int r = 0; r < 2; ++r) {
    for (int i = 0; i < 4; ++i) EXPECT_EQ(recvInt(ranks[r], i), 10 + 2 * i);
  }
}

TEST(ScheduleSimulatorTest, SendsBeforeReceivesDeadlockOnlyWithoutBuffering) {
  std::vector<Schedule> schedules;
  for (int r = 0; r < 2; ++r) {
    schedules.push_back(of({{send(1 - r, sendBuf(0, 16))}, {recv(1 - r, recvBuf(0, 16))}}));
  }
  std::vector<SimRank> ranks = twoRanks();
  Status status = runSchedules(ranks, schedules, Buffering::kRendezvous);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("deadlock"), std::string::npos) << status.message();
  ranks = twoRanks();
  status = runSchedules(ranks, schedules, Buffering::kEager);
  EXPECT_TRUE(status.isOk()) << status.message();
  EXPECT_EQ(recvInt(ranks[0], 3), 13);
}

TEST(ScheduleSimulatorTest, ReceivesFirstDeadlockAlways) {
  std::vector<Schedule> schedules;
  for (int r = 0; r < 2; ++r) {
    schedules.push_back(of({{recv(1 - r, recvBuf(0, 16))}, {send(1 - r, sendBuf(0, 16))}}));
  }
  std::vector<SimRank> ranks = twoRanks();
  EXPECT_FALSE(runSchedules(ranks, schedules, Buffering::kEager).isOk());
}

TEST(ScheduleSimulatorTest, RejectsMismatchedSizesAndUnmatchedMessages) {
  std::vector<SimRank> ranks = twoRanks();
  std::vector<Schedule> sizes = {of({{send(1, sendBuf(0, 8))}}), of({{recv(0, recvBuf(0, 16))}})};
  Status status = runSchedules(ranks, sizes);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("expects 16 bytes"), std::string::npos) << status.message();

  std::vector<Schedule> unmatched = {of({{send(1, sendBuf(0, 8))}}), of({})};
  EXPECT_FALSE(runSchedules(ranks, unmatched).isOk());
}

TEST(ScheduleSimulatorTest, RejectsOutOfBoundsMisalignedAndOversizedSpans) {
  std::vector<SimRank> ranks = twoRanks();
  std::vector<Schedule> past = {of({{send(1, sendBuf(8, 16))}}), of({{recv(0, recvBuf(0, 16))}})};
  EXPECT_FALSE(runSchedules(ranks, past).isOk());
  std::vector<Schedule> scratch = {of({{send(1, Span{BufferId::kScratch, 0, 4})}}),
                                   of({{recv(0, recvBuf(0, 4))}})};
  EXPECT_FALSE(runSchedules(ranks, scratch).isOk());  // no scratch was asked for
  std::vector<Schedule> halfElement = {of({{send(1, sendBuf(0, 2))}}),
                                       of({{recv(0, recvBuf(0, 2))}})};
  EXPECT_FALSE(runSchedules(ranks, halfElement).isOk());
  ranks = twoRanks(/*chunkBytes=*/8);
  std::vector<Schedule> oversized = {of({{send(1, sendBuf(0, 16))}}),
                                     of({{recv(0, recvBuf(0, 16))}})};
  Status status = runSchedules(ranks, oversized);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("chunk"), std::string::npos) << status.message();
}

TEST(ScheduleSimulatorTest, RejectsUnorderedWritesToMemoryTheStepReads) {
  std::vector<SimRank> ranks = twoRanks();
  // In place: send and recv are the same memory, so receiving over what is being sent races.
  for (SimRank& rank : ranks) {
    rank.args.inPlace = true;
    rank = makeSimRank(rank.args);
  }
  std::vector<Schedule> racy, ordered;
  for (int r = 0; r < 2; ++r) {
    racy.push_back(of({{send(1 - r, sendBuf(0, 16)), recv(1 - r, recvBuf(0, 16))}}));
    ordered.push_back(of({{send(1 - r, sendBuf(0, 16)), recv(1 - r, recvBuf(0, 16), 0)}}));
  }
  Status status = runSchedules(ranks, racy);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("same memory"), std::string::npos) << status.message();
  // Ordered, it is correct, though only a buffering connector lets the send finish first.
  Status eager = runSchedules(ranks, ordered, Buffering::kEager);
  EXPECT_TRUE(eager.isOk()) << eager.message();
  EXPECT_FALSE(runSchedules(ranks, ordered, Buffering::kRendezvous).isOk());
}

TEST(ScheduleSimulatorTest, RejectsForwardAfterAndDisagreeingAlgorithms) {
  std::vector<SimRank> ranks = twoRanks();
  std::vector<Schedule> forward = {of({{recv(1, recvBuf(0, 16), 1), send(1, sendBuf(0, 16))}}),
                                   of({{recv(0, recvBuf(0, 16)), send(0, sendBuf(0, 16))}})};
  EXPECT_FALSE(runSchedules(ranks, forward).isOk());
  std::vector<Schedule> names = {of({}), of({})};
  names[1].algorithm = "other";
  EXPECT_FALSE(runSchedules(ranks, names).isOk());
}

TEST(ScheduleSimulatorTest, RejectsTransfersQueuedBehindAWaitingOne) {
  std::vector<SimRank> ranks = twoRanks();
  // Rank 1's second receive waits on the first, but a third one on the same
  // connector would be posted before it by an executor.
  std::vector<Schedule> schedules = {
      of({{send(1, sendBuf(0, 4)), send(1, sendBuf(4, 4)), send(1, sendBuf(8, 4))}}),
      of({{recv(0, recvBuf(0, 4)), recv(0, recvBuf(4, 4), 0), recv(0, recvBuf(8, 4))}})};
  Status status = runSchedules(ranks, schedules, Buffering::kEager);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("same connector later"), std::string::npos) << status.message();
}

TEST(ScheduleSimulatorTest, LaysOutInPlaceBuffersAsTheCApiAliasesThem) {
  CollArgs args;
  args.count = 3;
  args.type = braidFloat64;
  args.rank = 2;
  args.nranks = 4;
  args.inPlace = true;
  args.kind = CollKind::kAllGather;
  SimRank gather = makeSimRank(args);
  EXPECT_EQ(gather.send(), gather.recv() + 2 * 24);
  args.kind = CollKind::kReduceScatter;
  SimRank scatter = makeSimRank(args);
  EXPECT_EQ(scatter.recv(), scatter.send() + 2 * 24);
  args.kind = CollKind::kAllReduce;
  SimRank same = makeSimRank(args);
  EXPECT_EQ(same.send(), same.recv());
  args.kind = CollKind::kBroadcast;
  args.inPlace = false;
  EXPECT_EQ(makeSimRank(args).send(), nullptr);  // non-root broadcast has no send buffer
}

}  // namespace
}  // namespace braid::testing
