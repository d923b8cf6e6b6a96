// braidCommInitRankBroadcast: the unique id carried by the caller's broadcast (here a
// shared buffer between rank threads, as MPI_Bcast would carry it between processes).
// Ranks join in the order given and all-reduce correctly; bad arguments, a failing
// broadcast and rank 0's failure to create the id are clear errors on every rank, with
// no rank left waiting. braidSetLastError sets what braidGetLastError(NULL) says.
#include <gtest/gtest.h>

#include <barrier>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "braid.h"
#include "support/spawn.h"

namespace {

// A broadcast among threads: rank 0 publishes its buffer, the others copy it.
struct ThreadBroadcast {
  explicit ThreadBroadcast(int nranks) : sync(nranks) {}
  std::barrier<> sync;
  std::vector<char> data;
  bool failing = false;  // every call fails, as a broken MPI_Bcast would
};

struct RankArg {
  ThreadBroadcast* shared;
  int rank;
};

int threadBroadcast(void* buffer, size_t bytes, void* context) {
  auto* arg = static_cast<RankArg*>(context);
  ThreadBroadcast& b = *arg->shared;
  if (arg->rank == 0) b.data.assign(static_cast<char*>(buffer), static_cast<char*>(buffer) + bytes);
  b.sync.arrive_and_wait();
  if (arg->rank != 0) std::memcpy(buffer, b.data.data(), bytes);
  b.sync.arrive_and_wait();  // nobody reuses `data` before everyone has copied it
  return b.failing ? 1 : 0;
}

struct RankResult {
  braidResult_t code = braidSuccess;
  std::string message;
  braidComm_t comm = nullptr;
};

// Every rank calls braidCommInitRankBroadcast as `rankOf(thread)`.
std::vector<RankResult> initAll(int nranks, ThreadBroadcast* shared,
                                const std::vector<int>& rankOf) {
  std::vector<RankResult> results(nranks);
  std::vector<std::thread> threads;
  for (int t = 0; t < nranks; ++t) {
    threads.emplace_back([&, t] {
      RankArg arg{shared, rankOf[t]};
      results[t].code =
          braidCommInitRankBroadcast(&results[t].comm, nranks, rankOf[t], threadBroadcast, &arg);
      results[t].message = braidGetLastError(nullptr);
    });
  }
  for (auto& thread : threads) thread.join();
  return results;
}

TEST(ApiBroadcastInit, RanksJoinInTheGivenOrderAndAllReduce) {
  constexpr int kRanks = 4;
  ThreadBroadcast shared(kRanks);
  // Thread t is rank kRanks-1-t: ranks follow the caller's numbering, not start order.
  std::vector<int> rankOf = {3, 2, 1, 0};
  std::vector<RankResult> results = initAll(kRanks, &shared, rankOf);
  for (int t = 0; t < kRanks; ++t) {
    ASSERT_EQ(results[t].code, braidSuccess) << results[t].message;
    int rank = -1, count = -1;
    ASSERT_EQ(braidCommUserRank(results[t].comm, &rank), braidSuccess);
    ASSERT_EQ(braidCommCount(results[t].comm, &count), braidSuccess);
    EXPECT_EQ(rank, rankOf[t]);
    EXPECT_EQ(count, kRanks);
  }
  std::vector<std::thread> threads;
  std::vector<std::vector<int>> recv(kRanks, std::vector<int>(1001));
  std::vector<braidResult_t> codes(kRanks);
  for (int t = 0; t < kRanks; ++t) {
    threads.emplace_back([&, t] {
      std::vector<int> send(1001);
      for (size_t i = 0; i < send.size(); ++i) send[i] = rankOf[t] * 1000 + static_cast<int>(i);
      codes[t] = braidAllReduce(send.data(), recv[t].data(), send.size(), braidInt32, braidSum,
                                results[t].comm, nullptr);
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kRanks; ++t) {
    ASSERT_EQ(codes[t], braidSuccess) << braidGetLastError(results[t].comm);
    for (int i = 0; i < 1001; ++i) ASSERT_EQ(recv[t][i], 6000 + 4 * i) << "thread " << t;
    braidCommDestroy(results[t].comm);
  }
}

TEST(ApiBroadcastInit, BadArgumentsNameTheArgument) {
  braidComm_t comm = reinterpret_cast<braidComm_t>(&comm);
  EXPECT_EQ(braidCommInitRankBroadcast(nullptr, 2, 0, threadBroadcast, nullptr),
            braidInvalidArgument);
  EXPECT_NE(std::string(braidGetLastError(nullptr)).find("comm is NULL"), std::string::npos);
  EXPECT_EQ(braidCommInitRankBroadcast(&comm, 2, 0, nullptr, nullptr), braidInvalidArgument);
  EXPECT_EQ(comm, nullptr);
  EXPECT_NE(std::string(braidGetLastError(nullptr)).find("broadcast is NULL"), std::string::npos);
  EXPECT_EQ(braidCommInitRankBroadcast(&comm, 2, 2, threadBroadcast, nullptr),
            braidInvalidArgument);
  EXPECT_NE(std::string(braidGetLastError(nullptr)).find("rank 2"), std::string::npos);
  EXPECT_EQ(braidCommInitRankBroadcast(&comm, 0, 0, threadBroadcast, nullptr),
            braidInvalidArgument);
  EXPECT_NE(std::string(braidGetLastError(nullptr)).find("nranks 0"), std::string::npos);
}

TEST(ApiBroadcastInit, AFailingBroadcastIsAnErrorOnEveryRank) {
  ThreadBroadcast shared(3);
  shared.failing = true;
  for (const RankResult& r : initAll(3, &shared, {0, 1, 2})) {
    EXPECT_EQ(r.code, braidSystemError);
    EXPECT_EQ(r.comm, nullptr);
    EXPECT_NE(r.message.find("broadcast of the unique id failed"), std::string::npos) << r.message;
  }
}

TEST(ApiBroadcastInit, RankZerosFailureReachesEveryRank) {
  // Rank 0 cannot create the id (no such interface): the others learn why, and wait for
  // nothing.
  braid::testing::ScopedEnv env("BRAID_SOCKET_IFNAME", "braidnosuch0");
  ThreadBroadcast shared(3);
  for (const RankResult& r : initAll(3, &shared, {0, 1, 2})) {
    EXPECT_NE(r.code, braidSuccess);
    EXPECT_EQ(r.comm, nullptr);
    EXPECT_NE(r.message.find("braidnosuch0"), std::string::npos) << r.message;
  }
  std::vector<RankResult> results = initAll(3, &shared, {1, 0, 2});
  EXPECT_NE(results[0].message.find("rank 0 could not create the unique id"), std::string::npos)
      << results[0].message;
}

TEST(ApiBroadcastInit, SetLastErrorIsWhatGetLastErrorSays) {
  EXPECT_EQ(braidSetLastError(braidInvalidUsage, "companion: mpiComm is wrong"), braidInvalidUsage);
  EXPECT_STREQ(braidGetLastError(nullptr), "companion: mpiComm is wrong");
  EXPECT_EQ(braidSetLastError(braidInvalidArgument, nullptr), braidInvalidArgument);
  EXPECT_STREQ(braidGetLastError(nullptr), "");
}

}  // namespace
