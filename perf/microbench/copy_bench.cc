// The copy baseline for the reduction kernels: std::memcpy between two
// distinct buffers at the same sizes. bytes_per_second counts memory traffic
// (one read and one write, 2 x size), as reduce_bench does.
#include <benchmark/benchmark.h>

#include <cstring>

#include "buffers.h"

namespace braid::bench {
namespace {

void copyMemcpy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  Buffer source = makeBuffer(bytes), destination = makeBuffer(bytes);
  if (!source || !destination) {
    state.SkipWithError("allocation failed");
    return;
  }
  for (auto _ : state) {
    std::memcpy(destination.get(), source.get(), bytes);
    benchmark::DoNotOptimize(destination.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 *
                          static_cast<int64_t>(bytes));
}

const bool kRegistered = [] {
  auto* bench = benchmark::RegisterBenchmark("copy/memcpy", copyMemcpy);
  for (size_t bytes : kBenchBytes) bench->Arg(static_cast<int64_t>(bytes));
  return true;
}();

}  // namespace
}  // namespace braid::bench

BENCHMARK_MAIN();
