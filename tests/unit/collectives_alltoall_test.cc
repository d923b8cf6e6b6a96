// AllToAll (in place and out of place) and AllToAllv (uneven, empty, gapped and
// non-monotone blocks): every type x count on shm and socket with 1..8 ranks.
#include <gtest/gtest.h>

#include "support/sweep_runner.h"

namespace braid::testing {
namespace {

class AllToAllSweepTest : public ::testing::TestWithParam<SweepParam> {};

TEST_P(AllToAllSweepTest, MatchesReference) {
  const auto& [transport, nranks] = GetParam();
  SweepSpec spec;
  spec.collectives = {Collective::kAllToAll, Collective::kAllToAllv};
  runSweepOnThreads(nranks, spec, SpawnOptions::withTransport(transport));
}

INSTANTIATE_TEST_SUITE_P(Grid, AllToAllSweepTest,
                         ::testing::Combine(::testing::ValuesIn(sweepTransports()),
                                            ::testing::ValuesIn(sweepRankCounts())),
                         sweepParamName);

}  // namespace
}  // namespace braid::testing
