// The sweep under configurations that stress other code paths: tiny FIFOs
// and an odd chunk size (many slot wraparounds, chunks that split elements'
// blocks unevenly, waiters that sleep at once, streaming-store copies and reduces at odd
// alignments), several socket streams, and
// the portable and AVX2 reduction kernels instead of the widest one.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "core/kernels/reduce.h"
#include "support/sweep_runner.h"

namespace braid::testing {
namespace {

using ConfigParam = std::tuple<std::string, std::string, int>;  // config, transport, nranks

SpawnOptions optionsFor(const std::string& config, const std::string& transport) {
  SpawnOptions options = SpawnOptions::withTransport(transport);
  if (config == "tiny_fifo") {
    options.set("BRAID_SHM_SLOT_BYTES", "4096")
        .set("BRAID_SHM_SLOTS", "2")
        .set("BRAID_CHUNK_BYTES", "3000")  // not a power of two; a multiple of every element
        .set("BRAID_SOCKET_NSTREAMS", "3")
        .set("BRAID_SOCKET_BUFFER_BYTES", "4096")
        .set("BRAID_SPIN", "0")
        .set("BRAID_STREAM_STORE_BYTES", "1");  // every shm receive copies with streaming stores
  } else {
    options.set("BRAID_REDUCE_ISA", config);  // "portable" or "avx2"
  }
  return options;
}

class ConfigSweepTest : public ::testing::TestWithParam<ConfigParam> {};

TEST_P(ConfigSweepTest, MatchesReference) {
  const auto& [config, transport, nranks] = GetParam();
  SweepSpec spec;
  if (config == "tiny_fifo") {
    spec.collectives = allCollectives();
    spec.largeCount = 100003;  // ~10^3 slot handoffs per peer already
  } else {
    spec.collectives = {Collective::kAllReduce, Collective::kReduceScatter};
  }
  const SpawnOptions options = optionsFor(config, transport);
  if (config != "tiny_fifo") {
    // The kernel table is chosen once per process; under ctest each case is its own process.
    ScopedEnv env(options.env);
    if (std::string(coll::reduceIsa()) != config) {
      GTEST_SKIP() << "reduce kernels already dispatched to " << coll::reduceIsa()
                   << "; run this case alone (as ctest does)";
    }
  }
  runSweepOnThreads(nranks, spec, options);
}

std::string configParamName(const ::testing::TestParamInfo<ConfigParam>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
         std::to_string(std::get<2>(info.param)) + "ranks";
}

INSTANTIATE_TEST_SUITE_P(
    Stress, ConfigSweepTest,
    ::testing::Values(ConfigParam{"tiny_fifo", "shm", 3}, ConfigParam{"tiny_fifo", "shm", 4},
                      ConfigParam{"tiny_fifo", "socket", 3}, ConfigParam{"tiny_fifo", "socket", 4},
                      ConfigParam{"portable", "shm", 3}, ConfigParam{"avx2", "shm", 3}),
    configParamName);

}  // namespace
}  // namespace braid::testing
