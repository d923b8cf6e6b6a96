// Point to point and barrier: grouped send/recv (a ring, and a distinct block
// to and from every peer with receives posted in reverse order) for every type
// x count, and a barrier that must hold every rank until the last one arrives.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

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

INSTANTIATE_TEST_SUITE_P(Grid, P2pSweepTest,
                         ::testing::Combine(::testing::ValuesIn(sweepTransports()),
                                            ::testing::ValuesIn(sweepRankCounts())),
                         sweepParamName);

}  // namespace
}  // namespace braid::testing
