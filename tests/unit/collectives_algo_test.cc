// Forced algorithms: BRAID_ALGO=ring and =tree for AllReduce, Broadcast and
// Reduce, =rd for AllReduce (its only collective), on shm and socket with
// 1..8 ranks (the auto choice is covered by the other collectives_* sweeps).
// Each algorithm needs its own communicator, since the variable is read at init.
#include <gtest/gtest.h>

#include "support/sweep_runner.h"

namespace braid::testing {
namespace {

using AlgoParam = std::tuple<std::string, std::string, int>;  // algorithm, transport, nranks

class AlgoSweepTest : public ::testing::TestWithParam<AlgoParam> {};

TEST_P(AlgoSweepTest, MatchesReference) {
  const auto& [algorithm, transport, nranks] = GetParam();
  SweepSpec spec;
  spec.collectives = {Collective::kAllReduce, Collective::kBroadcast, Collective::kReduce};
  if (algorithm == "rd") spec.collectives = {Collective::kAllReduce};
  runSweepOnThreads(nranks, spec,
                    SpawnOptions::withTransport(transport).set("BRAID_ALGO", algorithm));
}

std::string algoParamName(const ::testing::TestParamInfo<AlgoParam>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
         std::to_string(std::get<2>(info.param)) + "ranks";
}

INSTANTIATE_TEST_SUITE_P(Grid, AlgoSweepTest,
                         ::testing::Combine(::testing::Values("ring", "tree", "rd"),
                                            ::testing::ValuesIn(sweepTransports()),
                                            ::testing::ValuesIn(sweepRankCounts())),
                         algoParamName);

}  // namespace
}  // namespace braid::testing
