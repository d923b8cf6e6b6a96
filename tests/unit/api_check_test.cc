// BRAID_CHECK=1: matching calls run normally; a mismatch in count, type, op,
// root or collective becomes an error on every rank, quickly, naming the
// calls — instead of a hang or a silently wrong answer.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "support/spawn.h"

namespace braid::testing {
namespace {

SpawnOptions checked(const std::string& transport) {
  return SpawnOptions::withTransport(transport, 20).set("BRAID_CHECK", "1");
}

class ArgumentCheckTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ArgumentCheckTest, MatchingCallsStillWork) {
  spawn(
      3,
      [](braidComm_t comm, int rank) {
        std::vector<float> send(1000, float(rank + 1)), recv(1000, 0);
        EXPECT_EQ(
            braidAllReduce(send.data(), recv.data(), 1000, braidFloat32, braidSum, comm, nullptr),
            braidSuccess)
            << braidGetLastError(comm);
        EXPECT_EQ(recv[999], 6.0f);
        EXPECT_EQ(braidBroadcast(send.data(), recv.data(), 1000, braidFloat32, 2, comm, nullptr),
                  braidSuccess)
            << braidGetLastError(comm);
        EXPECT_EQ(recv[0], 3.0f);
        EXPECT_EQ(braidAllReduce(nullptr, nullptr, 0, braidFloat32, braidSum, comm, nullptr),
                  braidSuccess);
        EXPECT_EQ(braidBarrier(comm, nullptr), braidSuccess);
      },
      checked(GetParam()));
}

// Runs `call(rank)` on 3 ranks; expects every rank to fail within seconds
// with a message naming rank 1 (the odd one out) and its call: the ranks that
// compare first answer braidInvalidUsage, and their abort may reach a slower
// rank first, which then answers braidRemoteError carrying the same reason.
void expectMismatchCaught(const std::string& transport,
                          const std::function<braidResult_t(braidComm_t, int)>& call,
                          const std::string& mention) {
  spawn(
      3,
      [&](braidComm_t comm, int rank) {
        auto start = std::chrono::steady_clock::now();
        braidResult_t r = call(comm, rank);
        double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        EXPECT_NE(r, braidSuccess) << "rank " << rank << " did not notice the mismatch";
        EXPECT_LT(seconds, 10) << "rank " << rank << " waited for its deadline";
        EXPECT_TRUE(r == braidInvalidUsage || r == braidRemoteError)
            << "rank " << rank << ": " << braidGetErrorString(r);
        std::string message = braidGetLastError(comm);
        EXPECT_NE(message.find("BRAID_CHECK"), std::string::npos) << message;
        EXPECT_NE(message.find(mention), std::string::npos) << message;
        EXPECT_NE(message.find("rank 1"), std::string::npos) << message;
      },
      checked(transport));
}

TEST_P(ArgumentCheckTest, CountMismatch) {
  expectMismatchCaught(
      GetParam(),
      [](braidComm_t comm, int rank) {
        std::vector<float> buf(100, 1);
        size_t count = rank == 1 ? 99 : 100;
        return braidAllReduce(buf.data(), buf.data(), count, braidFloat32, braidSum, comm, nullptr);
      },
      "count 99");
}

TEST_P(ArgumentCheckTest, SameSizeTypeMismatch) {
  // float32 and int32 have the same size: without the check this would be garbage.
  expectMismatchCaught(
      GetParam(),
      [](braidComm_t comm, int rank) {
        std::vector<int32_t> buf(64, 1);
        braidDataType_t type = rank == 1 ? braidInt32 : braidFloat32;
        return braidAllReduce(buf.data(), buf.data(), 64, type, braidSum, comm, nullptr);
      },
      "int32");
}

TEST_P(ArgumentCheckTest, OpAndRootMismatch) {
  expectMismatchCaught(
      GetParam(),
      [](braidComm_t comm, int rank) {
        std::vector<float> buf(64, 1);
        braidRedOp_t op = rank == 1 ? braidMax : braidSum;
        return braidReduce(buf.data(), buf.data(), 64, braidFloat32, op, 0, comm, nullptr);
      },
      "max");
  expectMismatchCaught(
      GetParam(),
      [](braidComm_t comm, int rank) {
        std::vector<float> buf(64, 1);
        return braidBroadcast(buf.data(), buf.data(), 64, braidFloat32, rank == 1 ? 1 : 0, comm,
                              nullptr);
      },
      "root 1");
}

TEST_P(ArgumentCheckTest, DifferentCollectives) {
  expectMismatchCaught(
      GetParam(),
      [](braidComm_t comm, int rank) {
        std::vector<float> buf(300, 1);
        if (rank == 1)
          return braidAllGather(buf.data(), buf.data() + 100, 100, braidFloat32, comm, nullptr);
        return braidAllReduce(buf.data(), buf.data(), 100, braidFloat32, braidSum, comm, nullptr);
      },
      "braidAllGather");
}

INSTANTIATE_TEST_SUITE_P(Transports, ArgumentCheckTest, ::testing::Values("shm", "socket"));

}  // namespace
}  // namespace braid::testing
