// Never hang: a wait for a peer that never comes ends with braidTimeout after
// BRAID_TIMEOUT (naming the peer, and leaving a sticky async error), and
// braidCommAbort from another thread ends it at once.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "support/spawn.h"

namespace braid::testing {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// "peer 1", "rank 1", "from 1" ...: the message must name the absent rank.
void expectNamesPeer(const std::string& message, int peer) {
  bool namesRole =
      message.find("peer") != std::string::npos || message.find("rank") != std::string::npos;
  EXPECT_TRUE(namesRole && message.find(std::to_string(peer)) != std::string::npos)
      << "last error does not name peer " << peer << ": \"" << message << "\"";
}

TEST(ApiFaults, RecvFromSilentPeerTimesOut) {
  constexpr int kTimeout = 2;
  std::vector<braidComm_t> comms = initRanks(2, SpawnOptions::withTransport("shm", kTimeout));
  ASSERT_EQ(comms.size(), 2u);
  std::vector<float> buf(1024);
  auto start = Clock::now();
  braidResult_t result = braidRecv(buf.data(), buf.size(), braidFloat32, 1, comms[0], nullptr);
  double seconds = secondsSince(start);
  EXPECT_EQ(result, braidTimeout) << braidGetErrorString(result);
  EXPECT_GT(seconds, kTimeout * 0.8) << "gave up before BRAID_TIMEOUT";
  EXPECT_LT(seconds, kTimeout + 5);
  expectNamesPeer(braidGetLastError(comms[0]), 1);
  braidResult_t async = braidSuccess;
  EXPECT_EQ(braidCommGetAsyncError(comms[0], &async), braidSuccess);
  EXPECT_NE(async, braidSuccess) << "a timed-out communicator must keep a sticky error";
  for (braidComm_t comm : comms) braidCommDestroy(comm);
}

TEST(ApiFaults, AllReduceWithAnAbsentPeerTimesOut) {
  constexpr int kTimeout = 2;
  std::vector<braidComm_t> comms = initRanks(3, SpawnOptions::withTransport("socket", kTimeout));
  ASSERT_EQ(comms.size(), 3u);
  // Ranks 0 and 1 enter; rank 2 never does.
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      std::vector<float> buf(1 << 20, 1.0f);
      auto start = Clock::now();
      braidResult_t result = braidAllReduce(buf.data(), buf.data(), buf.size(), braidFloat32,
                                            braidSum, comms[rank], nullptr);
      double seconds = secondsSince(start);
      EXPECT_TRUE(result == braidTimeout || result == braidRemoteError)
          << "rank " << rank << ": " << braidGetErrorString(result);
      EXPECT_LT(seconds, kTimeout + 5) << "rank " << rank;
      EXPECT_GT(std::strlen(braidGetLastError(comms[rank])), 0u) << "rank " << rank;
    });
  }
  for (auto& t : ranks) t.join();
  for (braidComm_t comm : comms) braidCommDestroy(comm);
}

TEST(ApiFaults, InitWithAMissingRankTimesOut) {
  constexpr int kTimeout = 2;
  ScopedEnv env("BRAID_TIMEOUT", std::to_string(kTimeout));
  braidUniqueId id;
  ASSERT_EQ(braidGetUniqueId(&id), braidSuccess);
  braidComm_t comm = nullptr;
  auto start = Clock::now();
  braidResult_t result = braidCommInitRank(&comm, 2, id, 0);  // rank 1 never comes
  EXPECT_NE(result, braidSuccess);
  EXPECT_LT(secondsSince(start), kTimeout + 5);
  EXPECT_GT(std::strlen(braidGetLastError(nullptr)), 0u);
  if (result == braidSuccess) braidCommDestroy(comm);
}

// The process that made the id exits while its root still waits for a rank: the rank that
// joined is told so at once, instead of waiting out BRAID_TIMEOUT, and the exit neither
// crashes nor hangs on the root's thread.
TEST(ApiFaults, ARootWhoseProcessExitsTellsTheRanksWhoJoined) {
  constexpr int kTimeout = 60;
  ScopedEnv env("BRAID_TIMEOUT", std::to_string(kTimeout));
  int idPipe[2], goPipe[2];
  ASSERT_EQ(::pipe(idPipe), 0);
  ASSERT_EQ(::pipe(goPipe), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    braidUniqueId id;
    if (braidGetUniqueId(&id) != braidSuccess) ::_exit(3);
    if (::write(idPipe[1], &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id))) ::_exit(4);
    char go;
    if (::read(goPipe[0], &go, 1) != 1) ::_exit(5);
    std::exit(0);  // runs the static destructors, where the root is stopped
  }
  braidUniqueId id;
  ASSERT_EQ(::read(idPipe[0], &id, sizeof(id)), static_cast<ssize_t>(sizeof(id)));

  braidResult_t result = braidSuccess;
  std::string error;
  braidComm_t comm = nullptr;
  std::thread rank([&] {
    result = braidCommInitRank(&comm, 2, id, 0);  // rank 1 never comes
    error = braidGetLastError(nullptr);
  });
  // Long enough for rank 0 to be admitted on a busy machine; if it were not, it would
  // fail at connect and the message check below would say so.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  auto start = Clock::now();
  ASSERT_EQ(::write(goPipe[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const double exitSeconds = secondsSince(start);
  rank.join();

  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  EXPECT_LT(exitSeconds, 10) << "the exit waited on the root";
  EXPECT_LT(secondsSince(start), 10) << "the rank waited out its timeout";
  EXPECT_NE(result, braidSuccess);
  EXPECT_NE(error.find("exited before every rank joined"), std::string::npos) << error;
  if (result == braidSuccess) braidCommDestroy(comm);
  for (int fd : {idPipe[0], idPipe[1], goPipe[0], goPipe[1]}) ::close(fd);
}

// Ranks that disagree on the count must get an error (or a timeout), never
// silently exchange garbage, crash or hang.
TEST(ApiFaults, MismatchedCountsFailOnEveryRank) {
  for (const char* transport : {"shm", "socket"}) {
    SCOPED_TRACE(transport);
    spawn(
        2,
        [](braidComm_t comm, int rank) {
          const size_t count = rank == 0 ? 1000 : 3000;
          std::vector<float> send(count, 1.0f), recv(count);
          auto start = Clock::now();
          braidResult_t result = braidAllReduce(send.data(), recv.data(), count, braidFloat32,
                                                braidSum, comm, nullptr);
          EXPECT_NE(result, braidSuccess) << "rank " << rank << " accepted mismatched counts";
          EXPECT_LT(secondsSince(start), 2 + 5) << "rank " << rank;
        },
        SpawnOptions::withTransport(transport, 2));
  }
}

// Rank 0 waits for a message rank 1 never sends; a watchdog thread aborts rank
// 0's communicator. The wait must end promptly (BRAID_TIMEOUT is far away),
// and rank 1, told of the abort, must fail its next collective instead of
// waiting out its own timeout.
TEST(ApiFaults, AbortFromAnotherThreadUnblocksAWait) {
  constexpr int kTimeout = 30;
  for (const char* transport : {"shm", "socket"}) {
    SCOPED_TRACE(transport);
    std::vector<braidComm_t> comms = initRanks(2, SpawnOptions::withTransport(transport, kTimeout));
    ASSERT_EQ(comms.size(), 2u);
    std::latch rank0Done(1);
    std::thread rank1([&] {
      rank0Done.wait();
      std::vector<int32_t> buf(1000, 1);
      auto start = Clock::now();
      braidResult_t result =
          braidAllReduce(buf.data(), buf.data(), 1000, braidInt32, braidSum, comms[1], nullptr);
      EXPECT_NE(result, braidSuccess) << "allreduce with an aborted peer succeeded";
      EXPECT_LT(secondsSince(start), 10) << "the abort was not propagated to the peer";
      braidCommDestroy(comms[1]);
    });
    std::thread watchdog([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      EXPECT_EQ(braidCommAbort(comms[0]), braidSuccess);
    });
    std::vector<double> buf(1 << 16);
    auto start = Clock::now();
    braidResult_t result = braidRecv(buf.data(), buf.size(), braidFloat64, 1, comms[0], nullptr);
    double seconds = secondsSince(start);
    EXPECT_NE(result, braidSuccess);
    EXPECT_LT(seconds, 5) << "abort did not unblock the receive";
    watchdog.join();  // braidCommAbort released comms[0]: no further use
    rank0Done.count_down();
    rank1.join();
  }
}

}  // namespace
}  // namespace braid::testing
