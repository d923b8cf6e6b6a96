// The copy baseline for the reduction kernels: std::memcpy between two
// distinct buffers at the same sizes, and braid's streaming copy
// (core/kernels/copy.h) beside it. bytes_per_second counts memory traffic
// as the program sees it (one read and one write, 2 x size), as reduce_bench
// does; a streaming copy past the caches saves the destination's
// read-for-ownership, which this figure does not count.
//
// copy/slot_out/* is the shm receive path: a 128 KiB FIFO slot, hot in cache,
// copied slot by slot into a destination far larger than the last-level
// cache (64 MiB), with memcpy and with streaming stores.
#include <benchmark/benchmark.h>

#include <cstring>

#include "buffers.h"
#include "core/kernels/copy.h"

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

void copyStreaming(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  Buffer source = makeBuffer(bytes), destination = makeBuffer(bytes);
  if (!source || !destination) {
    state.SkipWithError("allocation failed");
    return;
  }
  for (auto _ : state) {
    coll::copyStreaming(destination.get(), source.get(), bytes);
    benchmark::DoNotOptimize(destination.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 *
                          static_cast<int64_t>(bytes));
}

// One pass over a 64 MiB destination from a hot 128 KiB slot; range(0): 1 = streaming.
void copySlotOut(benchmark::State& state) {
  constexpr size_t kSlotBytes = size_t{128} << 10, kDestinationBytes = size_t{64} << 20;
  const bool streaming = state.range(0) != 0;
  Buffer slot = makeBuffer(kSlotBytes), destination = makeBuffer(kDestinationBytes);
  if (!slot || !destination) {
    state.SkipWithError("allocation failed");
    return;
  }
  for (auto _ : state) {
    for (size_t offset = 0; offset < kDestinationBytes; offset += kSlotBytes) {
      coll::copyInto(destination.get() + offset, slot.get(), kSlotBytes, streaming);
    }
    benchmark::DoNotOptimize(destination.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 *
                          static_cast<int64_t>(kDestinationBytes));
}

const bool kRegistered = [] {
  auto* bench = benchmark::RegisterBenchmark("copy/memcpy", copyMemcpy);
  for (size_t bytes : kBenchBytes) bench->Arg(static_cast<int64_t>(bytes));
  bench = benchmark::RegisterBenchmark("copy/streaming", copyStreaming);
  for (size_t bytes : kBenchBytes) bench->Arg(static_cast<int64_t>(bytes));
  benchmark::RegisterBenchmark("copy/slot_out/memcpy", copySlotOut)->Arg(0);
  benchmark::RegisterBenchmark("copy/slot_out/streaming", copySlotOut)->Arg(1);
  return true;
}();

}  // namespace
}  // namespace braid::bench

BENCHMARK_MAIN();
