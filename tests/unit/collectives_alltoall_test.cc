// AllToAll (in place and out of place) and AllToAllv (uneven, empty, gapped and
// non-monotone blocks): every type x count on shm and socket with 1..8 ranks, and on shm
// with all-to-all blocks read in place (single copy) with 2..4 ranks.
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

// Blocks read in place (single copy), as on a host whose ranks outnumber its CPUs
// (transports/shm/single_copy.h); the large cases' blocks are past the size floor.
class AllToAllBlockReadTest : public ::testing::TestWithParam<int> {};

TEST_P(AllToAllBlockReadTest, MatchesReference) {
  SweepSpec spec;
  spec.collectives = {Collective::kAllToAll, Collective::kAllToAllv};
  spec.counts = {4099};
  runSweepOnThreads(GetParam(), spec,
                    SpawnOptions::withTransport("shm")
                        .set("BRAID_SHM_TEST_CPUS", "1")
                        .set("BRAID_STREAM_STORE_BYTES", std::to_string(size_t{1} << 30)));
}

INSTANTIATE_TEST_SUITE_P(Ranks, AllToAllBlockReadTest, ::testing::Values(2, 3, 4));

}  // namespace
}  // namespace braid::testing
