// SIMD building blocks shared by every ISA's reduction kernels: GCC vector-extension types
// and the element-wise operators, written once so that each ISA file only picks a width.
//
// Semantics (identical on every ISA, and what the tests check; NaN payloads are unspecified):
// - sum, prod: integers wrap modulo 2^bits (the lanes are unsigned, so no signed-overflow UB);
//   floats follow IEEE 754 in the lane type (fp32 for fp16/bf16).
// - max, min: NaN propagates, as torch.maximum does (a NaN gradient must not vanish in an
//   all-reduce): if a is NaN the result is a, else if b is NaN it is b. Equal operands,
//   including -0 against +0, give b.
//
// Everything here has internal linkage on purpose: each ISA file includes this header under
// different -m flags, and an inline function with external linkage would be merged across
// them by the linker, letting AVX-512 code leak into the portable path.
#pragma once

#include <cstddef>
#include <cstring>

namespace braid::coll {
namespace {  // NOLINT(build/namespaces): see the linkage note above.

// A vector of `kBytes / sizeof(T)` lanes of T. (A plain alias template would drop the
// attribute on the dependent type, so it goes through a struct.)
template <class T, size_t kBytes>
struct VectorOf {
  typedef T type __attribute__((vector_size(kBytes)));
};
template <class T, size_t kBytes>
using Vec = typename VectorOf<T, kBytes>::type;

// The unit a codec loads and stores: kCount vectors of compute lanes. Element-wise kernels
// apply their operator to each vector in turn.
template <class V, int kCount>
struct VectorBlock {
  static constexpr int kVectors = kCount;
  V v[kCount];
};

// Reinterprets the bits of a value as another type of the same size.
template <class To, class From>
inline To bitCast(const From& from) {
  static_assert(sizeof(To) == sizeof(From));
  return __builtin_bit_cast(To, from);
}

// Unaligned vector load and store: collective buffers are only element-aligned.
template <class V, class T>
inline V loadUnaligned(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
template <class V, class T>
inline void storeUnaligned(T* p, V v) {
  std::memcpy(p, &v, sizeof(V));
}

// Each operator applies to one scalar or to a whole vector alike; `|` and `?:` work on both
// (vector comparisons yield lane masks).
struct SumOp {
  template <class V>
  static V apply(V a, V b) {
    return a + b;
  }
};

struct ProdOp {
  template <class V>
  static V apply(V a, V b) {
    return a * b;
  }
};

struct MaxOp {
  template <class V>
  static V apply(V a, V b) {
    return ((a > b) | (a != a)) ? a : b;  // a != a: a is NaN (never for integers)
  }
};

struct MinOp {
  template <class V>
  static V apply(V a, V b) {
    return ((a < b) | (a != a)) ? a : b;
  }
};

}  // namespace
}  // namespace braid::coll
