// The ring (chain) broadcast cuts the buffer into chunks so that a rank can
// forward one while the next arrives. On two ranks nobody forwards, so the
// buffer goes as one message whatever the chunk size; from three ranks on the
// chunks stay. (Results against the reference, for every rank count and
// chunking: schedule_collectives_test.)
#include <gtest/gtest.h>

#include <algorithm>

#include "collectives/select.h"

namespace braid::coll {
namespace {

CollArgs broadcastArgs(size_t count, int nranks, int rank, int root) {
  CollArgs args;
  args.kind = CollKind::kBroadcast;
  args.count = count;
  args.type = braidFloat32;
  args.nranks = nranks;
  args.rank = rank;
  args.root = root;
  args.chunkBytes = 64;  // 16 floats: many chunks per message below
  return args;
}

struct Messages {
  int sends = 0;
  int recvs = 0;
  size_t largest = 0;  // bytes
};

Messages messagesOf(const CollArgs& args) {
  Result<Schedule> schedule = buildSchedule(args, "ring");
  EXPECT_TRUE(schedule.isOk()) << schedule.status().message();
  Messages m;
  if (!schedule.isOk()) return m;
  for (const Step& step : schedule->steps) {
    for (const Action& a : step.actions) {
      if (a.kind == ActionKind::kSend) {
        ++m.sends;
        m.largest = std::max(m.largest, a.src.bytes);
      } else if (a.kind == ActionKind::kRecv) {
        ++m.recvs;
        m.largest = std::max(m.largest, a.dst.bytes);
      }
    }
  }
  return m;
}

TEST(RingBroadcastTest, TwoRanksSendTheWholeBufferAsOneMessage) {
  const size_t count = 1000;  // 4000 bytes: 63 chunks of 64 bytes
  for (int root : {0, 1}) {
    Messages sender = messagesOf(broadcastArgs(count, 2, root, root));
    Messages receiver = messagesOf(broadcastArgs(count, 2, 1 - root, root));
    EXPECT_EQ(sender.sends, 1) << "root " << root;
    EXPECT_EQ(sender.recvs, 0) << "root " << root;
    EXPECT_EQ(receiver.recvs, 1) << "root " << root;
    EXPECT_EQ(receiver.sends, 0) << "root " << root;
    EXPECT_EQ(sender.largest, count * sizeof(float));
    EXPECT_EQ(receiver.largest, count * sizeof(float));
  }
}

TEST(RingBroadcastTest, TwoRanksSendNothingForAnEmptyBuffer) {
  Messages sender = messagesOf(broadcastArgs(0, 2, 0, 0));
  Messages receiver = messagesOf(broadcastArgs(0, 2, 1, 0));
  EXPECT_EQ(sender.sends + sender.recvs + receiver.sends + receiver.recvs, 0);
}

TEST(RingBroadcastTest, ThreeRanksKeepTheChunksForwarding) {
  const size_t count = 1000;
  Messages middle = messagesOf(broadcastArgs(count, 3, 1, 0));
  EXPECT_EQ(middle.recvs, 63);
  EXPECT_EQ(middle.sends, 63);
  EXPECT_EQ(middle.largest, 64u);
}

}  // namespace
}  // namespace braid::coll
