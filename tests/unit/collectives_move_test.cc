// Broadcast, AllGather, Gather and Scatter: every type x count x placement x
// root on shm and socket with 1..8 ranks, compared bit for bit (random bit
// patterns, NaNs included, so nothing may pass through a float conversion).
#include <gtest/gtest.h>

#include "support/sweep_runner.h"

namespace braid::testing {
namespace {

class MoveSweepTest : public ::testing::TestWithParam<SweepParam> {};

TEST_P(MoveSweepTest, MatchesReference) {
  const auto& [transport, nranks] = GetParam();
  SweepSpec spec;
  spec.collectives = {Collective::kBroadcast, Collective::kAllGather, Collective::kGather,
                      Collective::kScatter};
  runSweepOnThreads(nranks, spec, SpawnOptions::withTransport(transport));
}

INSTANTIATE_TEST_SUITE_P(Grid, MoveSweepTest,
                         ::testing::Combine(::testing::ValuesIn(sweepTransports()),
                                            ::testing::ValuesIn(sweepRankCounts())),
                         sweepParamName);

}  // namespace
}  // namespace braid::testing
