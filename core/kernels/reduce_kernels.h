// The generic reduce and divide loops, and the table that instantiates them for every
// (type, op). An ISA file supplies only a vector width and an fp16 codec:
//
//   struct MyIsa { static constexpr size_t kVectorBytes = 32; using Fp16Codec = ...; };
//   constexpr ReduceKernelTable kTable = makeReduceKernelTable<MyIsa>();
//
// Loops run whole blocks, then finish the last partial block through a zero-padded copy,
// so the tail is computed exactly as the body is (same conversions, same rounding). Each
// block is loaded from a and b before dst is stored, so dst may alias a or b exactly.
// Every (type, op) also gets a streaming twin (reduceStreamingKernel) that writes whole
// blocks of dst with non-temporal stores, for receive-reduces into buffers far larger than
// the cache; its results are the same bits.
//
// Internal linkage on purpose: see reduce_vector.h.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/kernels/reduce_dispatch.h"
#include "core/kernels/reduce_fp8.h"
#include "core/kernels/reduce_half.h"
#include "core/kernels/reduce_vector.h"

namespace braid::coll {
namespace {  // NOLINT(build/namespaces): see reduce_vector.h.

// Types the CPU computes on directly: memory and lanes hold the same type.
template <size_t kVectorBytes, class T>
struct NativeCodec {
  using Storage = T;
  using Vector = Vec<T, kVectorBytes>;
  using Block = VectorBlock<Vector, 1>;
  static constexpr size_t kElements = kVectorBytes / sizeof(T);

  static Block load(const Storage* p) { return Block{{loadUnaligned<Vector>(p)}}; }
  static void store(Storage* p, const Block& block) { storeUnaligned(p, block.v[0]); }
};

// A codec (see reduce_half.h for the others) has: Storage, the element type in memory;
// Vector, the compute lanes; Block, VectorBlock<Vector, k>; kElements, elements per block;
// and load(const Storage*) / store(Storage*, const Block&) moving one block.

// The lane type of a codec's vectors (float for fp16/bf16).
template <class Codec>
using LaneOf = std::remove_cvref_t<decltype(typename Codec::Vector{}[0])>;

template <class Codec, class Op>
inline void reduceBlock(typename Codec::Storage* out, const typename Codec::Storage* a,
                        const typename Codec::Storage* b) {
  typename Codec::Block x = Codec::load(a);
  const typename Codec::Block y = Codec::load(b);
  for (int j = 0; j < Codec::Block::kVectors; ++j) x.v[j] = Op::apply(x.v[j], y.v[j]);
  Codec::store(out, x);
}

// Kept out of line so that the hot loop's frame stays small.
template <class Codec, class Op>
__attribute__((noinline)) void reduceTail(typename Codec::Storage* out,
                                          const typename Codec::Storage* a,
                                          const typename Codec::Storage* b, size_t count) {
  using Storage = typename Codec::Storage;
  Storage paddedA[Codec::kElements] = {};
  Storage paddedB[Codec::kElements] = {};
  std::memcpy(paddedA, a, count * sizeof(Storage));
  std::memcpy(paddedB, b, count * sizeof(Storage));
  reduceBlock<Codec, Op>(paddedA, paddedA, paddedB);
  std::memcpy(out, paddedA, count * sizeof(Storage));
}

// A ReduceFn: dst[i] = a[i] (op) b[i].
template <class Codec, class Op>
void reduceKernel(void* dst, const void* a, const void* b, size_t n) {
  using Storage = typename Codec::Storage;
  constexpr size_t kElements = Codec::kElements;
  auto* out = static_cast<Storage*>(dst);
  const auto* in1 = static_cast<const Storage*>(a);
  const auto* in2 = static_cast<const Storage*>(b);
  size_t i = 0;
  // No unrolling: out-of-order cores overlap iterations already (unrolled was no faster).
  for (; i + kElements <= n; i += kElements) reduceBlock<Codec, Op>(out + i, in1 + i, in2 + i);
  if (i < n) reduceTail<Codec, Op>(out + i, in1 + i, in2 + i, n - i);
}

// A ReduceFn like reduceKernel whose result goes to memory with non-temporal stores, for a
// destination far larger than the cache (see reducerFor's streaming flag in reduce.h): it
// saves the read of each destination line before it is overwritten. Elements before the
// first 64-byte boundary of dst, and the last partial block, go through reduceKernel; so does
// everything when dst is not element-aligned or the block is no whole number of 16-byte
// units. Ends with a fence, so a flag published afterwards is ordered after the result.
template <class Codec, class Op>
void reduceStreamingKernel(void* dst, const void* a, const void* b, size_t n) {
  using Storage = typename Codec::Storage;
  constexpr size_t kElements = Codec::kElements;
  constexpr size_t kBlockBytes = kElements * sizeof(Storage);
  constexpr size_t kLineBytes = 64;
  const auto address = reinterpret_cast<uintptr_t>(dst);
  if constexpr (!kHasStreamingStores || kBlockBytes % 16 != 0 || kLineBytes % kBlockBytes != 0) {
    reduceKernel<Codec, Op>(dst, a, b, n);
  } else {
    if (address % sizeof(Storage) != 0) return reduceKernel<Codec, Op>(dst, a, b, n);
    auto* out = static_cast<Storage*>(dst);
    const auto* in1 = static_cast<const Storage*>(a);
    const auto* in2 = static_cast<const Storage*>(b);
    const size_t head =
        std::min(n, (kLineBytes - address % kLineBytes) % kLineBytes / sizeof(Storage));
    reduceKernel<Codec, Op>(out, in1, in2, head);
    size_t i = head;
    for (; i + kElements <= n; i += kElements) {
      typename Codec::Block x = Codec::load(in1 + i);
      const typename Codec::Block y = Codec::load(in2 + i);
      for (int j = 0; j < Codec::Block::kVectors; ++j) x.v[j] = Op::apply(x.v[j], y.v[j]);
      alignas(kLineBytes) Storage result[kElements];
      Codec::store(result, x);
      streamStore<kBlockBytes>(out + i, result);
    }
    if (i < n) reduceKernel<Codec, Op>(out + i, in1 + i, in2 + i, n - i);
    streamFence();
  }
}

template <class Codec>
inline void divideBlock(typename Codec::Storage* p, LaneOf<Codec> divisor) {
  typename Codec::Block x = Codec::load(p);
  for (int j = 0; j < Codec::Block::kVectors; ++j) x.v[j] = x.v[j] / divisor;
  Codec::store(p, x);
}

// A DivideFn for floating-point types: one IEEE division per lane. For fp16/bf16/fp8 the fp32
// quotient is rounded again on store, which still equals the correctly rounded quotient
// (fp32 has more than twice their precision plus two bits, so double rounding is harmless).
template <class Codec>
void divideFloatKernel(void* dst, size_t n, int divisor) {
  using Storage = typename Codec::Storage;
  constexpr size_t kElements = Codec::kElements;
  if (divisor < 1) return;  // avg divides by a rank count; anything else leaves dst as is
  const auto d = static_cast<LaneOf<Codec>>(divisor);
  auto* p = static_cast<Storage*>(dst);
  size_t i = 0;
  for (; i + kElements <= n; i += kElements) divideBlock<Codec>(p + i, d);
  if (i < n) {
    Storage padded[kElements] = {};
    std::memcpy(padded, p + i, (n - i) * sizeof(Storage));
    divideBlock<Codec>(padded, d);
    std::memcpy(p + i, padded, (n - i) * sizeof(Storage));
  }
}

// A DivideFn for integers: C++ division truncates toward zero. Done in 64 bits so that a
// divisor wider than the element (int8 over 200 ranks) is exact. There is no SIMD integer
// division, so this stays scalar; integer averages are rare.
template <class T>
void divideIntegerKernel(void* dst, size_t n, int divisor) {
  using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  if (divisor < 1) return;
  const auto d = static_cast<Wide>(divisor);
  auto* p = static_cast<T*>(dst);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<Wide>(p[i]) / d);
}

// Both kernels of one (type, op): cached stores and streaming stores.
template <class Codec, class Op>
constexpr void setReduceKernels(ReduceKernelTable& table, braidDataType_t type, braidRedOp_t op) {
  table.reduce[type][op] = &reduceKernel<Codec, Op>;
  table.reduceStreaming[type][op] = &reduceStreamingKernel<Codec, Op>;
}

template <class Codec>
constexpr void setFloatKernels(ReduceKernelTable& table, braidDataType_t type) {
  setReduceKernels<Codec, SumOp>(table, type, braidSum);
  setReduceKernels<Codec, ProdOp>(table, type, braidProd);
  setReduceKernels<Codec, MaxOp>(table, type, braidMax);
  setReduceKernels<Codec, MinOp>(table, type, braidMin);
  table.divide[type] = &divideFloatKernel<Codec>;
}

// Sum and prod run on the unsigned twin of T: two's complement makes the bits identical and
// unsigned overflow is defined. Max and min need T's own ordering.
template <size_t kVectorBytes, class T>
constexpr void setIntegerKernels(ReduceKernelTable& table, braidDataType_t type) {
  using Wrapping = NativeCodec<kVectorBytes, std::make_unsigned_t<T>>;
  using Ordered = NativeCodec<kVectorBytes, T>;
  setReduceKernels<Wrapping, SumOp>(table, type, braidSum);
  setReduceKernels<Wrapping, ProdOp>(table, type, braidProd);
  setReduceKernels<Ordered, MaxOp>(table, type, braidMax);
  setReduceKernels<Ordered, MinOp>(table, type, braidMin);
  table.divide[type] = &divideIntegerKernel<T>;
}

template <class Isa>
constexpr ReduceKernelTable makeReduceKernelTable() {
  constexpr size_t kBytes = Isa::kVectorBytes;
  ReduceKernelTable table{};
  setIntegerKernels<kBytes, int8_t>(table, braidInt8);
  setIntegerKernels<kBytes, uint8_t>(table, braidUint8);
  setIntegerKernels<kBytes, int32_t>(table, braidInt32);
  setIntegerKernels<kBytes, uint32_t>(table, braidUint32);
  setIntegerKernels<kBytes, int64_t>(table, braidInt64);
  setIntegerKernels<kBytes, uint64_t>(table, braidUint64);
  setFloatKernels<typename Isa::Fp16Codec>(table, braidFloat16);
  setFloatKernels<NativeCodec<kBytes, float>>(table, braidFloat32);
  setFloatKernels<NativeCodec<kBytes, double>>(table, braidFloat64);
  setFloatKernels<Bf16Codec<kBytes>>(table, braidBfloat16);
  setFloatKernels<Fp8Codec<kBytes, Fp8E4m3Format>>(table, braidFloat8e4m3);
  setFloatKernels<Fp8Codec<kBytes, Fp8E5m2Format>>(table, braidFloat8e5m2);
  return table;
}

}  // namespace
}  // namespace braid::coll
