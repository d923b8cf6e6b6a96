// braidCommShrink on ranks that are threads of one process: a healthy
// communicator shrinks to the ranks not excluded (excluded callers get NULL),
// the result computes correct all-reduces and shrinks again; bad arguments
// are refused with a message naming them; survivors that disagree on whom to
// exclude get an error naming a disagreeing rank within BRAID_TIMEOUT instead
// of a hang. Killed and stalled ranks are tests/integration/faults.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "support/spawn.h"

namespace braid::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Each rank contributes (old rank + 1) * (i + 1): the sum is independent of
// the new ranks, so it checks that the right ranks took part.
void expectAllReduceOverOldRanks(braidComm_t comm, int oldRank, const std::vector<int>& members) {
  constexpr size_t kCount = 4099;
  std::vector<int64_t> buf(kCount);
  for (size_t i = 0; i < kCount; ++i) buf[i] = (oldRank + 1) * static_cast<int64_t>(i + 1);
  ASSERT_EQ(braidAllReduce(buf.data(), buf.data(), kCount, braidInt64, braidSum, comm, nullptr),
            braidSuccess)
      << braidGetLastError(comm);
  int64_t weight = 0;
  for (int r : members) weight += r + 1;
  for (size_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(buf[i], weight * static_cast<int64_t>(i + 1)) << "element " << i;
  }
}

TEST(FaultShrink, HealthyCommunicatorShrinksTwice) {
  // The last case runs the bootstrap, the shrink rendezvous and the transport over TLS.
  for (const auto& [transport, tls] : {std::pair{"shm", "0"}, {"socket", "0"}, {"socket", "1"}}) {
    SCOPED_TRACE(std::string(transport) + " BRAID_SOCKET_TLS=" + tls);
    spawn(
        5,
        [](braidComm_t comm, int rank) {
          const int exclude[] = {3, 1};
          braidComm_t shrunk = nullptr;
          ASSERT_EQ(braidCommShrink(comm, exclude, 2, &shrunk), braidSuccess)
              << braidGetLastError(comm);
          if (rank == 1 || rank == 3) {
            EXPECT_EQ(shrunk, nullptr) << "an excluded rank got a communicator";
            return;
          }
          ASSERT_NE(shrunk, nullptr);
          int count = 0, newRank = -1;
          braidCommCount(shrunk, &count);
          braidCommUserRank(shrunk, &newRank);
          EXPECT_EQ(count, 3);
          EXPECT_EQ(newRank, rank == 0 ? 0 : rank == 2 ? 1 : 2);
          expectAllReduceOverOldRanks(shrunk, rank, {0, 2, 4});
          // Again, on the shrunk communicator: old ranks 0 and 4 remain.
          const int again[] = {1};
          braidComm_t twice = nullptr;
          ASSERT_EQ(braidCommShrink(shrunk, again, 1, &twice), braidSuccess)
              << braidGetLastError(shrunk);
          if (rank == 2) {
            EXPECT_EQ(twice, nullptr);
          } else {
            ASSERT_NE(twice, nullptr);
            expectAllReduceOverOldRanks(twice, rank, {0, 4});
            braidCommDestroy(twice);
          }
          braidCommDestroy(shrunk);
        },
        SpawnOptions::withTransport(transport, 30).set("BRAID_SOCKET_TLS", tls));
  }
}

TEST(FaultShrink, BadArgumentsAreRefusedByName) {
  std::vector<braidComm_t> comms = initRanks(1, SpawnOptions::withTransport("shm", 10));
  ASSERT_EQ(comms.size(), 1u);
  braidComm_t out = nullptr;
  const int outOfRange[] = {1};
  EXPECT_EQ(braidCommShrink(comms[0], outOfRange, 1, &out), braidInvalidArgument);
  EXPECT_NE(std::string(braidGetLastError(comms[0])).find("excluded rank 1"), std::string::npos)
      << braidGetLastError(comms[0]);
  EXPECT_EQ(braidCommShrink(comms[0], nullptr, 1, &out), braidInvalidArgument);
  EXPECT_EQ(braidCommShrink(comms[0], outOfRange, -1, &out), braidInvalidArgument);
  EXPECT_EQ(braidCommShrink(comms[0], nullptr, 0, nullptr), braidInvalidArgument);
  EXPECT_EQ(braidCommShrink(nullptr, nullptr, 0, &out), braidInvalidArgument);
  // Excluding nobody from one rank: a fresh one-rank communicator.
  ASSERT_EQ(braidCommShrink(comms[0], nullptr, 0, &out), braidSuccess);
  ASSERT_NE(out, nullptr);
  expectAllReduceOverOldRanks(out, 0, {0});
  braidCommDestroy(out);
  braidCommDestroy(comms[0]);
}

// Ranks 0 and 2 exclude rank 3, ranks 1 and 3 exclude rank 2: everyone
// thinks rank 0 leads, and rank 0 must refuse rank 1 by name.
TEST(FaultShrink, SurvivorsThatDisagreeFailWithinTheTimeout) {
  constexpr int kTimeout = 2;
  std::vector<braidComm_t> comms = initRanks(4, SpawnOptions::withTransport("shm", kTimeout));
  ASSERT_EQ(comms.size(), 4u);
  std::vector<std::thread> threads;
  std::vector<braidResult_t> results(4, braidSuccess);
  std::vector<std::string> messages(4);
  for (int rank = 0; rank < 4; ++rank) {
    threads.emplace_back([&, rank] {
      const int exclude = rank % 2 == 0 ? 3 : 2;
      braidComm_t out = nullptr;
      const auto start = Clock::now();
      results[rank] = braidCommShrink(comms[rank], &exclude, 1, &out);
      messages[rank] = braidGetLastError(comms[rank]);
      EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 2 * kTimeout + 5);
      if (out != nullptr) braidCommDestroy(out);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(results[0], braidInvalidUsage) << messages[0];
  EXPECT_NE(messages[0].find("rank 1 excludes a different set"), std::string::npos) << messages[0];
  EXPECT_NE(results[1], braidSuccess) << "rank 1 joined a shrink it disagreed with";
  for (int rank = 2; rank < 4; ++rank) {
    // Excluded by the other half: either told so (NULL) or an error; never a hang.
    SCOPED_TRACE("rank " + std::to_string(rank));
    EXPECT_TRUE(results[rank] == braidSuccess || results[rank] == braidTimeout ||
                results[rank] == braidInvalidUsage || results[rank] == braidRemoteError)
        << messages[rank];
  }
  for (braidComm_t comm : comms) braidCommAbort(comm);
}

// A survivor that never calls (it hangs, or died after the failure was
// detected) ends the shrink on every other survivor within BRAID_TIMEOUT,
// with an error naming it: first an absent follower, then an absent leader.
TEST(FaultShrink, AnAbsentSurvivorIsNamedWithinTheTimeout) {
  constexpr int kTimeout = 2;
  for (int absent : {2, 0}) {
    SCOPED_TRACE("absent rank " + std::to_string(absent));
    std::vector<braidComm_t> comms = initRanks(3, SpawnOptions::withTransport("shm", kTimeout));
    ASSERT_EQ(comms.size(), 3u);
    std::vector<std::thread> threads;
    for (int rank = 0; rank < 3; ++rank) {
      if (rank == absent) continue;
      threads.emplace_back([&, rank] {
        braidComm_t out = nullptr;
        const auto start = Clock::now();
        braidResult_t r = braidCommShrink(comms[rank], nullptr, 0, &out);
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        const std::string message = braidGetLastError(comms[rank]);
        EXPECT_TRUE(r == braidTimeout || r == braidRemoteError) << braidGetErrorString(r);
        EXPECT_EQ(out, nullptr);
        EXPECT_LT(seconds, 2 * kTimeout + 5);
        EXPECT_NE(message.find("rank " + std::to_string(absent)), std::string::npos)
            << "rank " << rank << ": " << message;
      });
    }
    for (auto& t : threads) t.join();
    for (braidComm_t comm : comms) braidCommAbort(comm);
  }
}

}  // namespace
}  // namespace braid::testing
