// Bad input at the C boundary: every call rejects it with braidInvalidArgument
// (or braidInvalidUsage), a last-error sentence that names the argument and its
// value, no communication, and a communicator that still works afterwards.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "support/reference.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

constexpr braidDataType_t kBadType = static_cast<braidDataType_t>(42);
constexpr braidRedOp_t kBadOp = static_cast<braidRedOp_t>(42);

// Expects `result` to be `code` with a last error that mentions every word in `words`.
void expectError(braidResult_t result, braidResult_t code, braidComm_t comm,
                 const std::vector<std::string>& words, const std::string& call) {
  EXPECT_EQ(result, code) << call << " returned " << braidGetErrorString(result);
  std::string message = braidGetLastError(comm);
  for (const std::string& word : words) {
    EXPECT_NE(message.find(word), std::string::npos)
        << call << ": last error \"" << message << "\" does not mention \"" << word << "\"";
  }
}

// After rejected calls the communicator must still produce correct results.
void expectUsable(braidComm_t comm, int nranks) {
  std::vector<int32_t> send(5, 1), recv(5, 0);
  ASSERT_EQ(braidAllReduce(send.data(), recv.data(), 5, braidInt32, braidSum, comm, nullptr),
            braidSuccess)
      << braidGetLastError(comm);
  EXPECT_EQ(recv, std::vector<int32_t>(5, nranks));
}

TEST(ApiErrors, NullCommIsRejectedByEveryCall) {
  float buf[4] = {};
  size_t counts[1] = {1}, displs[1] = {0};
  int value = 0;
  braidResult_t async;
  braidComm_t newcomm;
  const std::vector<std::pair<const char*, std::function<braidResult_t()>>> calls = {
      {"AllReduce",
       [&] { return braidAllReduce(buf, buf, 1, braidFloat32, braidSum, nullptr, nullptr); }},
      {"Broadcast", [&] { return braidBroadcast(buf, buf, 1, braidFloat32, 0, nullptr, nullptr); }},
      {"Reduce",
       [&] { return braidReduce(buf, buf, 1, braidFloat32, braidSum, 0, nullptr, nullptr); }},
      {"AllGather", [&] { return braidAllGather(buf, buf, 1, braidFloat32, nullptr, nullptr); }},
      {"ReduceScatter",
       [&] { return braidReduceScatter(buf, buf, 1, braidFloat32, braidSum, nullptr, nullptr); }},
      {"AllToAll", [&] { return braidAllToAll(buf, buf, 1, braidFloat32, nullptr, nullptr); }},
      {"AllToAllv",
       [&] {
         return braidAllToAllv(buf, counts, displs, buf, counts, displs, braidFloat32, nullptr,
                               nullptr);
       }},
      {"Gather", [&] { return braidGather(buf, buf, 1, braidFloat32, 0, nullptr, nullptr); }},
      {"Scatter", [&] { return braidScatter(buf, buf, 1, braidFloat32, 0, nullptr, nullptr); }},
      {"Send", [&] { return braidSend(buf, 1, braidFloat32, 0, nullptr, nullptr); }},
      {"Recv", [&] { return braidRecv(buf, 1, braidFloat32, 0, nullptr, nullptr); }},
      {"Barrier", [&] { return braidBarrier(nullptr, nullptr); }},
      {"CommCount", [&] { return braidCommCount(nullptr, &value); }},
      {"CommUserRank", [&] { return braidCommUserRank(nullptr, &value); }},
      {"CommCuDevice", [&] { return braidCommCuDevice(nullptr, &value); }},
      {"CommGetAsyncError", [&] { return braidCommGetAsyncError(nullptr, &async); }},
      {"CommSplit", [&] { return braidCommSplit(nullptr, 0, 0, &newcomm); }},
      {"CommFinalize", [&] { return braidCommFinalize(nullptr); }},
  };
  for (const auto& [name, call] : calls) {
    expectError(call(), braidInvalidArgument, nullptr, {"comm"}, name);
  }
  EXPECT_EQ(braidCommDestroy(nullptr), braidSuccess) << "braid.h: NULL is accepted";
}

TEST(ApiErrors, LibraryQueries) {
  int version = 0;
  ASSERT_EQ(braidGetVersion(&version), braidSuccess);
  EXPECT_EQ(version, BRAID_VERSION_CODE);
  expectError(braidGetVersion(nullptr), braidInvalidArgument, nullptr, {"version"},
              "GetVersion(NULL)");
  for (int code : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 42, -1}) {
    const char* text = braidGetErrorString(static_cast<braidResult_t>(code));
    ASSERT_NE(text, nullptr) << "code " << code;
    EXPECT_GT(std::strlen(text), 0u) << "code " << code;
  }
  EXPECT_STRNE(braidGetErrorString(braidSuccess), braidGetErrorString(braidInvalidArgument));
  EXPECT_STRNE(braidGetErrorString(braidTimeout), braidGetErrorString(braidRemoteError));
}

TEST(ApiErrors, InitArgumentsAreChecked) {
  braidUniqueId id;
  expectError(braidGetUniqueId(nullptr), braidInvalidArgument, nullptr, {"uniqueId"},
              "GetUniqueId(NULL)");
  ASSERT_EQ(braidGetUniqueId(&id), braidSuccess) << braidGetLastError(nullptr);
  braidComm_t comm = nullptr;
  expectError(braidCommInitRank(nullptr, 2, id, 0), braidInvalidArgument, nullptr, {"comm"},
              "CommInitRank(comm=NULL)");
  expectError(braidCommInitRank(&comm, 0, id, 0), braidInvalidArgument, nullptr, {"nranks", "0"},
              "CommInitRank(nranks=0)");
  expectError(braidCommInitRank(&comm, -3, id, 0), braidInvalidArgument, nullptr, {"nranks", "-3"},
              "CommInitRank(nranks=-3)");
  expectError(braidCommInitRank(&comm, 2, id, 2), braidInvalidArgument, nullptr, {"rank", "2"},
              "CommInitRank(rank=2 of 2)");
  expectError(braidCommInitRank(&comm, 2, id, -1), braidInvalidArgument, nullptr, {"rank", "-1"},
              "CommInitRank(rank=-1)");
  EXPECT_EQ(comm, nullptr);
  braidComm_t comms[2];
  expectError(braidCommInitAll(nullptr, 2, nullptr), braidInvalidArgument, nullptr, {"comms"},
              "CommInitAll(comms=NULL)");
  expectError(braidCommInitAll(comms, 0, nullptr), braidInvalidArgument, nullptr, {"ndev"},
              "CommInitAll(ndev=0)");
}

// A unique id of random bytes must fail cleanly and soon, on the would-be root
// and on another rank alike, never hang or crash.
TEST(ApiErrors, GarbageUniqueIdFailsWithinTheTimeout) {
  ScopedEnv env("BRAID_TIMEOUT", "3");
  std::mt19937_64 random(7);
  for (int rank : {0, 1}) {
    braidUniqueId garbage;
    for (char& byte : garbage.internal) byte = static_cast<char>(random());
    braidComm_t comm = nullptr;
    auto start = std::chrono::steady_clock::now();
    braidResult_t result = braidCommInitRank(&comm, 2, garbage, rank);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_NE(result, braidSuccess) << "rank " << rank << " joined a garbage unique id";
    EXPECT_LT(seconds, 3 + 5) << "rank " << rank << ": BRAID_TIMEOUT=3 was not honoured";
    EXPECT_GT(std::strlen(braidGetLastError(nullptr)), 0u) << "rank " << rank;
    EXPECT_EQ(comm, nullptr);
    if (result == braidSuccess) braidCommDestroy(comm);
  }
}

class ApiErrorsOnCommTest : public ::testing::Test {
 protected:
  // Runs `body` on both ranks of a 2-rank shm communicator; both make the same calls.
  void onTwoRanks(const RankBody& body) {
    spawn(2, body, SpawnOptions::withTransport("shm", /*timeoutSeconds=*/10));
  }
};

TEST_F(ApiErrorsOnCommTest, NullBuffersWithElementsAreRejected) {
  onTwoRanks([](braidComm_t comm, int rank) {
    std::vector<float> buf(16);
    float* b = buf.data();
    const std::vector<std::tuple<const char*, const char*, std::function<braidResult_t()>>> calls =
        {
            {"AllReduce", "sendbuff",
             [&] { return braidAllReduce(nullptr, b, 4, braidFloat32, braidSum, comm, nullptr); }},
            {"AllReduce", "recvbuff",
             [&] { return braidAllReduce(b, nullptr, 4, braidFloat32, braidSum, comm, nullptr); }},
            {"AllGather", "sendbuff",
             [&] { return braidAllGather(nullptr, b, 4, braidFloat32, comm, nullptr); }},
            {"AllGather", "recvbuff",
             [&] { return braidAllGather(b, nullptr, 4, braidFloat32, comm, nullptr); }},
            {"ReduceScatter", "sendbuff",
             [&] {
               return braidReduceScatter(nullptr, b, 4, braidFloat32, braidSum, comm, nullptr);
             }},
            {"AllToAll", "recvbuff",
             [&] { return braidAllToAll(b, nullptr, 4, braidFloat32, comm, nullptr); }},
            {"Send", "sendbuff",
             [&] { return braidSend(nullptr, 4, braidFloat32, 1 - rank, comm, nullptr); }},
            {"Recv", "recvbuff",
             [&] { return braidRecv(nullptr, 4, braidFloat32, 1 - rank, comm, nullptr); }},
        };
    for (const auto& [name, argument, call] : calls) {
      expectError(call(), braidInvalidArgument, comm, {argument}, name);
    }
    if (rank == 0) {  // the root's buffers are required; the call fails before any transfer
      expectError(braidBroadcast(nullptr, b, 4, braidFloat32, 0, comm, nullptr),
                  braidInvalidArgument, comm, {"sendbuff"}, "Broadcast(root, sendbuff=NULL)");
      expectError(braidReduce(b, nullptr, 4, braidFloat32, braidMax, 0, comm, nullptr),
                  braidInvalidArgument, comm, {"recvbuff"}, "Reduce(root, recvbuff=NULL)");
      expectError(braidGather(b, nullptr, 4, braidFloat32, 0, comm, nullptr), braidInvalidArgument,
                  comm, {"recvbuff"}, "Gather(root, recvbuff=NULL)");
      expectError(braidScatter(nullptr, b, 4, braidFloat32, 0, comm, nullptr), braidInvalidArgument,
                  comm, {"sendbuff"}, "Scatter(root, sendbuff=NULL)");
    }
    expectUsable(comm, 2);
  });
}

TEST_F(ApiErrorsOnCommTest, ZeroCountAcceptsNullBuffers) {
  onTwoRanks([](braidComm_t comm, int) {
    EXPECT_EQ(braidAllReduce(nullptr, nullptr, 0, braidFloat32, braidSum, comm, nullptr),
              braidSuccess)
        << braidGetLastError(comm);
    EXPECT_EQ(braidBroadcast(nullptr, nullptr, 0, braidInt8, 1, comm, nullptr), braidSuccess)
        << braidGetLastError(comm);
    EXPECT_EQ(braidAllGather(nullptr, nullptr, 0, braidFloat64, comm, nullptr), braidSuccess)
        << braidGetLastError(comm);
    expectUsable(comm, 2);
  });
}

TEST_F(ApiErrorsOnCommTest, BadTypeOpRootAndPeerAreNamed) {
  onTwoRanks([](braidComm_t comm, int) {
    std::vector<double> buf(16);
    double* b = buf.data();
    expectError(braidAllReduce(b, b, 2, kBadType, braidSum, comm, nullptr), braidInvalidArgument,
                comm, {"type", "42"}, "AllReduce(type=42)");
    expectError(braidAllGather(b, b + 8, 2, static_cast<braidDataType_t>(-1), comm, nullptr),
                braidInvalidArgument, comm, {"type", "-1"}, "AllGather(type=-1)");
    expectError(braidSend(b, 2, braidNumTypes, 0, comm, nullptr), braidInvalidArgument, comm,
                {"type"}, "Send(type=braidNumTypes)");
    expectError(braidAllReduce(b, b, 2, braidFloat64, kBadOp, comm, nullptr), braidInvalidArgument,
                comm, {"op", "42"}, "AllReduce(op=42)");
    expectError(braidReduceScatter(b, b, 2, braidFloat64, braidNumOps, comm, nullptr),
                braidInvalidArgument, comm, {"op"}, "ReduceScatter(op=braidNumOps)");
    expectError(braidReduce(b, b, 2, braidFloat64, braidSum, 2, comm, nullptr),
                braidInvalidArgument, comm, {"root", "2"}, "Reduce(root=2 of 2)");
    expectError(braidBroadcast(b, b, 2, braidFloat64, -1, comm, nullptr), braidInvalidArgument,
                comm, {"root", "-1"}, "Broadcast(root=-1)");
    expectError(braidGather(b, b, 2, braidFloat64, 7, comm, nullptr), braidInvalidArgument, comm,
                {"root", "7"}, "Gather(root=7)");
    expectError(braidScatter(b, b, 2, braidFloat64, 2, comm, nullptr), braidInvalidArgument, comm,
                {"root"}, "Scatter(root=2)");
    expectError(braidSend(b, 2, braidFloat64, 2, comm, nullptr), braidInvalidArgument, comm,
                {"peer", "2"}, "Send(peer=2 of 2)");
    expectError(braidRecv(b, 2, braidFloat64, -1, comm, nullptr), braidInvalidArgument, comm,
                {"peer", "-1"}, "Recv(peer=-1)");
    expectError(
        braidAllToAllv(b, nullptr, nullptr, b, nullptr, nullptr, braidFloat64, comm, nullptr),
        braidInvalidArgument, comm, {"counts"}, "AllToAllv(counts=NULL)");
    // Each rank's block for itself: 1 element sent, 2 expected. Only the rank itself can
    // see it, so validation must catch it on every rank before anything moves.
    const size_t sendCounts[2] = {1, 1}, recvCounts[2] = {2, 2}, displs[2] = {0, 2};
    expectError(braidAllToAllv(b, sendCounts, displs, b + 8, recvCounts, displs, braidFloat64, comm,
                               nullptr),
                braidInvalidArgument, comm, {"sendcounts[", "recvcounts["},
                "AllToAllv(own block 1 vs 2)");
    expectUsable(comm, 2);
  });
}

TEST_F(ApiErrorsOnCommTest, BadArgumentInsideAGroupLeavesTheCommUsable) {
  onTwoRanks([](braidComm_t comm, int) {
    std::vector<float> buf(4);
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    braidResult_t result =
        braidAllReduce(buf.data(), buf.data(), 4, kBadType, braidSum, comm, nullptr);
    braidResult_t ended = braidGroupEnd();
    // The error may surface at the call (as NCCL does) or at braidGroupEnd, but it must surface.
    EXPECT_TRUE(result == braidInvalidArgument || ended == braidInvalidArgument)
        << "call: " << braidGetErrorString(result) << ", group end: " << braidGetErrorString(ended);
    expectUsable(comm, 2);
  });
}

TEST_F(ApiErrorsOnCommTest, QueriesRejectNullOutputs) {
  onTwoRanks([](braidComm_t comm, int) {
    expectError(braidCommCount(comm, nullptr), braidInvalidArgument, comm, {"count"},
                "CommCount(NULL)");
    expectError(braidCommUserRank(comm, nullptr), braidInvalidArgument, comm, {"rank"},
                "CommUserRank(NULL)");
    expectError(braidCommCuDevice(comm, nullptr), braidInvalidArgument, comm, {"device"},
                "CommCuDevice(NULL)");
    expectError(braidCommGetAsyncError(comm, nullptr), braidInvalidArgument, comm, {"Error"},
                "CommGetAsyncError(NULL)");
    expectError(braidCommSplit(comm, 0, 0, nullptr), braidInvalidArgument, comm, {"newcomm"},
                "CommSplit(newcomm=NULL)");
    expectUsable(comm, 2);
  });
}

TEST(ApiErrors, GroupEndWithoutStartIsInvalidUsage) {
  EXPECT_EQ(braidGroupEnd(), braidInvalidUsage);
  EXPECT_NE(std::string(braidGetLastError(nullptr)).find("GroupStart"), std::string::npos)
      << braidGetLastError(nullptr);
}

}  // namespace
}  // namespace braid::testing
