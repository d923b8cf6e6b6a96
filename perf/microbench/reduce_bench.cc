// Microbenchmarks of the host reduction kernels, one per (type, op) and size:
// the kernel reducerFor() dispatches to, called as the executor calls it
// (dst = a op b, three distinct buffers). avg is not listed: it runs the sum
// kernel, plus one divide per reduction that the executor does at the end.
//
// bytes_per_second counts memory traffic: two inputs read and one output
// written, 3 x the vector size, so that it compares with copy_bench's
// 2 x size and with the machine's memory bandwidth. The reduce_streaming/
// variants run the non-temporal-store kernels that receives into buffers far
// larger than the cache use (reducerFor(..., streaming)); same byte count, so
// the two compare directly (the cached kernel also reads each dst line first).
#include <benchmark/benchmark.h>

#include <iterator>
#include <string>

#include "braid.h"
#include "buffers.h"
#include "core/kernels/reduce.h"
#include "core/types.h"

namespace braid::bench {
namespace {

const char* typeLabel(braidDataType_t type) {
  static const char* const kNames[] = {"int8", "uint8", "int32", "uint32", "int64",   "uint64",
                                       "fp16", "fp32",  "fp64",  "bf16",   "fp8e4m3", "fp8e5m2"};
  static_assert(std::size(kNames) == braidNumTypes, "a label for every braidDataType_t");
  return kNames[type];
}

const char* opLabel(braidRedOp_t op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min"};
  return kNames[op];
}

void reduceKernel(benchmark::State& state, braidDataType_t type, braidRedOp_t op, bool streaming) {
  const coll::ReduceFn kernel = coll::reducerFor(type, op, streaming);
  if (kernel == nullptr) {
    state.SkipWithError("reducerFor returned no kernel");
    return;
  }
  const size_t bytes = static_cast<size_t>(state.range(0));
  const size_t count = bytes / typeSize(type);
  Buffer a = makeBuffer(bytes), b = makeBuffer(bytes), dst = makeBuffer(bytes);
  if (!a || !b || !dst) {
    state.SkipWithError("allocation failed");
    return;
  }
  for (auto _ : state) {
    kernel(dst.get(), a.get(), b.get(), count);
    benchmark::DoNotOptimize(dst.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 3 *
                          static_cast<int64_t>(count * typeSize(type)));
  state.SetLabel(coll::reduceIsa());
}

// Registered at start-up, so that the list follows the enums.
const bool kRegistered = [] {
  for (int t = 0; t < braidNumTypes; ++t) {
    for (int o = braidSum; o <= braidMin; ++o) {
      const auto type = static_cast<braidDataType_t>(t);
      const auto op = static_cast<braidRedOp_t>(o);
      for (bool streaming : {false, true}) {
        const std::string name = std::string(streaming ? "reduce_streaming/" : "reduce/") +
                                 typeLabel(type) + "/" + opLabel(op);
        auto* bench = benchmark::RegisterBenchmark(name.c_str(), reduceKernel, type, op, streaming);
        for (size_t bytes : kBenchBytes) bench->Arg(static_cast<int64_t>(bytes));
      }
    }
  }
  return true;
}();

}  // namespace
}  // namespace braid::bench
