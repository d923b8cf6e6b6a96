// braidGroupSimulateEnd: the cost model's estimate for the calls queued in a group, which
// then do not run; the struct is checked like braidConfig_t, errors naming the argument.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "collectives/estimate.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

// The estimate for one all-reduce of `count` floats, queued alone in a group.
float simulateAllReduce(braidComm_t comm, std::vector<float>& buf, size_t count) {
  braidSimInfo_t info = BRAID_SIM_INFO_INITIALIZER;
  EXPECT_EQ(braidGroupStart(), braidSuccess);
  EXPECT_EQ(braidAllReduce(buf.data(), buf.data(), count, braidFloat32, braidSum, comm, nullptr),
            braidSuccess)
      << braidGetLastError(comm);
  EXPECT_EQ(braidGroupSimulateEnd(&info), braidSuccess) << braidGetLastError(nullptr);
  return info.estimatedTime;
}

TEST(GroupSimulate, EstimatesWithoutRunning) {
  spawn(3, [](braidComm_t comm, int rank) {
    std::vector<float> buf(1 << 20, float(rank + 1));
    const float tiny = simulateAllReduce(comm, buf, 1);
    const float large = simulateAllReduce(comm, buf, buf.size());
    EXPECT_GT(tiny, 0.0f);
    EXPECT_GT(large, tiny) << "a bigger call must estimate more";
    // Nothing ran: the in-place buffer still holds this rank's own values.
    EXPECT_EQ(buf[0], float(rank + 1));
    EXPECT_EQ(buf.back(), float(rank + 1));
    // The estimate is the cost model's: at least its time for the cheapest algorithm it knows
    // for the same call, and no more than the most expensive.
    coll::CollArgs args;
    args.kind = coll::CollKind::kAllReduce;
    args.count = buf.size();
    args.nranks = 3;
    double lowest = 1e30, highest = 0;
    for (const char* algorithm : {"ring", "tree", "rd"}) {
      const double us = coll::estimateCollectiveUs(args, algorithm);
      lowest = std::min(lowest, us);
      highest = std::max(highest, us);
    }
    EXPECT_GE(large, float(lowest) * 0.999f);
    EXPECT_LE(large, float(highest) * 1.001f);
    // Several calls add up; the group then works as usual.
    braidSimInfo_t two = BRAID_SIM_INFO_INITIALIZER;
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(
          braidAllReduce(buf.data(), buf.data(), buf.size(), braidFloat32, braidSum, comm, nullptr),
          braidSuccess);
    }
    EXPECT_EQ(braidGroupSimulateEnd(&two), braidSuccess);
    EXPECT_NEAR(two.estimatedTime, 2 * large, 1e-3 * large);
    std::vector<float> one(1, 1.0f);
    EXPECT_EQ(braidAllReduce(one.data(), one.data(), 1, braidFloat32, braidSum, comm, nullptr),
              braidSuccess);
    EXPECT_EQ(one[0], 3.0f);
  });
}

TEST(GroupSimulate, EmptyGroupAndPointToPoint) {
  spawn(2, [](braidComm_t comm, int rank) {
    braidSimInfo_t empty = BRAID_SIM_INFO_INITIALIZER;
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    EXPECT_EQ(braidGroupSimulateEnd(&empty), braidSuccess);
    EXPECT_EQ(empty.estimatedTime, 0.0f);
    // A send/recv pair: estimated, not run (no peer is waiting for it).
    std::vector<int> data(4096, rank), got(4096, -1);
    braidSimInfo_t p2p = BRAID_SIM_INFO_INITIALIZER;
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    EXPECT_EQ(braidSend(data.data(), data.size(), braidInt32, 1 - rank, comm, nullptr),
              braidSuccess);
    EXPECT_EQ(braidRecv(got.data(), got.size(), braidInt32, 1 - rank, comm, nullptr), braidSuccess);
    EXPECT_EQ(braidGroupSimulateEnd(&p2p), braidSuccess);
    EXPECT_GT(p2p.estimatedTime, 0.0f);
    EXPECT_EQ(got[0], -1);
  });
}

TEST(GroupSimulate, NestedEndsOneLevelAndKeepsTheCalls) {
  spawn(2, [](braidComm_t comm, int rank) {
    std::vector<float> buf(8, float(rank + 1));
    braidSimInfo_t inner = BRAID_SIM_INFO_INITIALIZER;
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    EXPECT_EQ(braidAllReduce(buf.data(), buf.data(), 8, braidFloat32, braidSum, comm, nullptr),
              braidSuccess);
    EXPECT_EQ(braidGroupSimulateEnd(&inner), braidSuccess);
    EXPECT_GT(inner.estimatedTime, 0.0f);
    EXPECT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(comm);
    EXPECT_EQ(buf[7], 3.0f) << "the outermost end runs what the inner simulation kept";
  });
}

TEST(GroupSimulate, BadStructsAreRejectedByName) {
  const auto expectRejected = [](braidSimInfo_t* info, const char* words) {
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    EXPECT_EQ(braidGroupSimulateEnd(info), braidInvalidArgument);
    const std::string message = braidGetLastError(nullptr);
    EXPECT_NE(message.find("simInfo"), std::string::npos) << message;
    EXPECT_NE(message.find(words), std::string::npos) << message;
    EXPECT_EQ(braidGroupEnd(), braidSuccess);  // the group is still open
  };
  expectRejected(nullptr, "NULL");
  braidSimInfo_t info = BRAID_SIM_INFO_INITIALIZER;
  info.magic = 0x74685283u;  // NCCL's magic is not braid's
  expectRejected(&info, "BRAID_SIM_INFO_INITIALIZER");
  info = BRAID_SIM_INFO_INITIALIZER;
  info.size = sizeof(size_t) + 2 * sizeof(unsigned);  // ends before estimatedTime
  expectRejected(&info, "size");
  info = BRAID_SIM_INFO_INITIALIZER;
  info.version = 0;
  expectRejected(&info, "version 0");
  // Outside a group.
  info = BRAID_SIM_INFO_INITIALIZER;
  EXPECT_EQ(braidGroupSimulateEnd(&info), braidInvalidUsage);
  EXPECT_NE(std::string(braidGetLastError(nullptr)).find("braidGroupStart"), std::string::npos);
}

TEST(GroupSimulate, RejectedCallFailsTheGroup) {
  spawn(2, [](braidComm_t comm, int) {
    std::vector<float> buf(4);
    braidSimInfo_t info = BRAID_SIM_INFO_INITIALIZER;
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    EXPECT_EQ(
        braidAllReduce(buf.data(), buf.data(), 4, braidDataType_t(99), braidSum, comm, nullptr),
        braidInvalidArgument);
    EXPECT_EQ(braidGroupSimulateEnd(&info), braidInvalidArgument);
    EXPECT_EQ(braidGroupStart(), braidSuccess);  // and the thread is out of the group
    EXPECT_EQ(braidGroupEnd(), braidSuccess);
  });
}

}  // namespace
}  // namespace braid::testing
