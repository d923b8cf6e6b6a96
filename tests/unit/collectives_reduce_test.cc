// AllReduce, Reduce and ReduceScatter: every type x op x count x placement x
// root on shm and socket with 1..8 ranks, checked against the float64 reference.
#include <gtest/gtest.h>

#include "support/sweep_runner.h"

namespace braid::testing {
namespace {

class ReduceSweepTest : public ::testing::TestWithParam<SweepParam> {};

TEST_P(ReduceSweepTest, MatchesReference) {
  const auto& [transport, nranks] = GetParam();
  SweepSpec spec;
  spec.collectives = {Collective::kAllReduce, Collective::kReduce, Collective::kReduceScatter};
  runSweepOnThreads(nranks, spec, SpawnOptions::withTransport(transport));
}

INSTANTIATE_TEST_SUITE_P(Grid, ReduceSweepTest,
                         ::testing::Combine(::testing::ValuesIn(sweepTransports()),
                                            ::testing::ValuesIn(sweepRankCounts())),
                         sweepParamName);

}  // namespace
}  // namespace braid::testing
