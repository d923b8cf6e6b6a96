// Point to point and barrier: grouped send/recv (a ring, and a distinct block
// to and from every peer with receives posted in reverse order) for every type
// x count, and a barrier that must hold every rank until the last one arrives.
// Sends and receives alone take the direct path (comm/direct_p2p.h), a group
// that also holds a collective the engine: the two must meet on the wire, reuse
// their requests across calls of changing shape, and name what a timeout waited for.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/sweep_runner.h"

namespace braid::testing {
namespace {

class P2pSweepTest : public ::testing::TestWithParam<SweepParam> {};

TEST_P(P2pSweepTest, GroupedSendRecvMatchesReference) {
  const auto& [transport, nranks] = GetParam();
  SweepSpec spec;
  spec.collectives = {Collective::kSendRecvRing, Collective::kSendRecvAllPairs,
                      Collective::kBarrier};
  runSweepOnThreads(nranks, spec, SpawnOptions::withTransport(transport));
}

TEST_P(P2pSweepTest, BarrierHoldsEveryRankUntilTheLastArrives) {
  const auto& [transport, nranks] = GetParam();
  constexpr int kRounds = 4;
  std::atomic<int> arrivals{0};
  spawn(
      nranks,
      [&](braidComm_t comm, int rank) {
        for (int round = 0; round < kRounds; ++round) {
          // One straggler per round; everyone else must wait for it.
          if (rank == (round + 1) % nranks) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
          }
          arrivals.fetch_add(1);
          braidResult_t result = braidBarrier(comm, nullptr);
          if (result != braidSuccess) {
            ADD_FAILURE() << "rank " << rank << ": " << braidGetLastError(comm);
            break;
          }
          // Arrivals only grow, so ranks racing ahead into the next round cannot hide a bug.
          EXPECT_GE(arrivals.load(), (round + 1) * nranks)
              << "rank " << rank << " left barrier " << round << " before every rank entered it";
        }
      },
      SpawnOptions::withTransport(transport));
}

// Rank `engineRank` sends in a group with an all-reduce (the engine runs it: sends and
// receives first, then the collective); its peer receives alone (the direct path), then
// all-reduces outside a group. Both must see the same messages in the same order.
void sendBesideACollective(const std::string& transport, int engineRank) {
  constexpr size_t kCount = 3000;
  spawn(
      2,
      [&](braidComm_t comm, int rank) {
        std::vector<int32_t> message(kCount), got(kCount, -1), in(kCount, rank + 1), sum(kCount, 0);
        for (size_t i = 0; i < kCount; ++i) message[i] = static_cast<int32_t>(i * 7 + 3);
        braidResult_t r = braidSuccess;
        if (rank == engineRank) {
          r = braidGroupStart();
          braidResult_t sent =
              braidSend(message.data(), kCount, braidInt32, 1 - rank, comm, nullptr);
          braidResult_t reduced =
              braidAllReduce(in.data(), sum.data(), kCount, braidInt32, braidSum, comm, nullptr);
          braidResult_t ended = braidGroupEnd();
          for (braidResult_t x : {sent, reduced, ended}) r = r == braidSuccess ? x : r;
        } else {
          r = braidGroupStart();
          braidResult_t received =
              braidRecv(got.data(), kCount, braidInt32, 1 - rank, comm, nullptr);
          braidResult_t ended = braidGroupEnd();
          for (braidResult_t x : {received, ended}) r = r == braidSuccess ? x : r;
          if (r == braidSuccess) {
            r = braidAllReduce(in.data(), sum.data(), kCount, braidInt32, braidSum, comm, nullptr);
          }
          EXPECT_EQ(got, message) << "rank " << rank << " received something else";
        }
        ASSERT_EQ(r, braidSuccess) << "rank " << rank << ": " << braidGetLastError(comm);
        EXPECT_EQ(sum, std::vector<int32_t>(kCount, 3)) << "rank " << rank;
      },
      SpawnOptions::withTransport(transport));
}

TEST(P2pPaths, TheDirectPathMeetsTheEngine) {
  for (const char* transport : {"shm", "socket"}) {
    SCOPED_TRACE(transport);
    sendBesideACollective(transport, 0);
    sendBesideACollective(transport, 1);
  }
}

// Groups that grow and shrink from call to call (1 to 4 messages each way, sizes
// changing): the direct path's reused requests must never mix two calls up.
TEST(P2pPaths, GroupsOfChangingShapeOnARing) {
  constexpr int kRanks = 3;
  spawn(
      kRanks,
      [&](braidComm_t comm, int rank) {
        const int right = (rank + 1) % kRanks, left = (rank + kRanks - 1) % kRanks;
        for (int call = 0; call < 24; ++call) {
          const int messages = 1 + (call * 5) % 4;
          const size_t count = 1 + (static_cast<size_t>(call) * 997) % 20000;
          auto value = [&](int from, int m, size_t i) {
            return static_cast<float>((from * 31 + m * 7 + call + static_cast<int>(i % 1000)) %
                                      4096);
          };
          std::vector<std::vector<float>> out(messages), in(messages);
          braidResult_t r = braidGroupStart();
          for (int m = 0; m < messages && r == braidSuccess; ++m) {
            out[m].resize(count);
            in[m].assign(count, -1.0f);
            for (size_t i = 0; i < count; ++i) out[m][i] = value(rank, m, i);
            r = braidSend(out[m].data(), count, braidFloat32, right, comm, nullptr);
            if (r == braidSuccess) {
              r = braidRecv(in[m].data(), count, braidFloat32, left, comm, nullptr);
            }
          }
          braidResult_t ended = braidGroupEnd();
          if (r == braidSuccess) r = ended;
          ASSERT_EQ(r, braidSuccess)
              << "rank " << rank << " call " << call << ": " << braidGetLastError(comm);
          for (int m = 0; m < messages; ++m) {
            for (size_t i = 0; i < count; ++i) {
              ASSERT_EQ(in[m][i], value(left, m, i))
                  << "rank " << rank << " call " << call << " message " << m << " element " << i;
            }
          }
        }
      },
      SpawnOptions::withTransport("shm"));
}

// A timeout on the direct path reads as the engine's: the call, the rank, and the
// transfer it waited for.
TEST(P2pPaths, ATimeoutNamesThePendingReceive) {
  std::vector<braidComm_t> comms = initRanks(2, SpawnOptions::withTransport("shm", 1));
  ASSERT_EQ(comms.size(), 2u);
  float out = 1.0f, in = 0.0f;
  ASSERT_EQ(braidGroupStart(), braidSuccess);
  ASSERT_EQ(braidSend(&out, 1, braidFloat32, 1, comms[0], nullptr), braidSuccess);
  ASSERT_EQ(braidRecv(&in, 1, braidFloat32, 1, comms[0], nullptr), braidSuccess);
  EXPECT_EQ(braidGroupEnd(), braidTimeout);  // rank 1 never calls
  const std::string message = braidGetLastError(comms[0]);
  EXPECT_NE(message.find("braidRecv on rank 0"), std::string::npos) << message;
  EXPECT_NE(message.find("recv from rank 1 (0/4 bytes)"), std::string::npos) << message;
  EXPECT_EQ(message.find("send to rank 1"), std::string::npos) << message;  // it went out
  for (braidComm_t comm : comms) braidCommDestroy(comm);
}

INSTANTIATE_TEST_SUITE_P(Grid, P2pSweepTest,
                         ::testing::Combine(::testing::ValuesIn(sweepTransports()),
                                            ::testing::ValuesIn(sweepRankCounts())),
                         sweepParamName);

}  // namespace
}  // namespace braid::testing
