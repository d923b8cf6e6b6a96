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

#if defined(__SSE2__)
#include <immintrin.h>
#endif

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

// Whether streamStore() bypasses the cache on this target (else it is a plain copy).
#if defined(__SSE2__)
constexpr bool kHasStreamingStores = true;
#else
constexpr bool kHasStreamingStores = false;
#endif

// Writes kBytes from `src` to `dst` with non-temporal stores, the widest this file's ISA
// flags allow: whole lines go to memory without being read first (see copy.h). `dst` and
// `src` (a local) must be aligned to the store width: the widest of 64, 32, 16 bytes that
// divides kBytes and the ISA has. The caller fences once after the last one (streamFence()).
template <size_t kBytes>
inline void streamStore(void* dst, const void* src) {
  static_assert(kBytes % 16 == 0, "streaming stores move whole 16-byte units");
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
#if defined(__AVX512F__)
  if constexpr (kBytes % 64 == 0) {
    for (size_t k = 0; k < kBytes; k += 64) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(d + k),
                          _mm512_load_si512(reinterpret_cast<const __m512i*>(s + k)));
    }
    return;
  }
#endif
#if defined(__AVX__)
  if constexpr (kBytes % 32 == 0) {
    for (size_t k = 0; k < kBytes; k += 32) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(d + k),
                          _mm256_load_si256(reinterpret_cast<const __m256i*>(s + k)));
    }
    return;
  }
#endif
#if defined(__SSE2__)
  for (size_t k = 0; k < kBytes; k += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + k),
                     _mm_load_si128(reinterpret_cast<const __m128i*>(s + k)));
  }
#else
  std::memcpy(d, s, kBytes);
#endif
}

// Orders earlier streaming stores before later stores (a flag, a counter).
inline void streamFence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
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
