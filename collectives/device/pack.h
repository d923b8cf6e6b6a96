// Packs: the unit of data the protocols move per thread and per access — 16 bytes (one
// vectorised load/store) on the Simple protocol, 8 bytes (an LL line's payload) on LL.
//
// Elements are read out of and written into a pack through memcpy, which compiles to
// register moves; a pack at an unaligned address or past the end of a buffer falls back to a
// byte copy of the valid part, so any element count and offset work (only slower).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "collectives/device/element_ops.h"
#include "collectives/device/portability.h"

namespace braid::device {

template <size_t kBytes>
struct alignas(kBytes) Pack {
  static_assert(kBytes % 8 == 0);
  uint64_t words[kBytes / 8];
};

/// Reads `valid` (<= kBytes) bytes at p; the rest of the pack is zero.
template <size_t kBytes>
BRAID_HD Pack<kBytes> loadPack(const uint8_t* p, size_t valid) {
  if (valid == kBytes && reinterpret_cast<uintptr_t>(p) % kBytes == 0) {
    return *reinterpret_cast<const Pack<kBytes>*>(p);
  }
  Pack<kBytes> x{};
  memcpy(&x, p, valid);
  return x;
}

/// Writes the first `valid` (<= kBytes) bytes of x to p.
template <size_t kBytes>
BRAID_HD void storePack(uint8_t* p, const Pack<kBytes>& x, size_t valid) {
  if (valid == kBytes && reinterpret_cast<uintptr_t>(p) % kBytes == 0) {
    *reinterpret_cast<Pack<kBytes>*>(p) = x;
    return;
  }
  memcpy(p, &x, valid);
}

/// a (op) b, element by element. Padding elements reduce harmlessly (they are never stored).
template <class T, class Op, size_t kBytes>
BRAID_HD Pack<kBytes> reducePack(const Pack<kBytes>& a, const Pack<kBytes>& b) {
  constexpr size_t kElements = kBytes / sizeof(T);
  T x[kElements], y[kElements];
  memcpy(x, &a, kBytes);
  memcpy(y, &b, kBytes);
  // A constant trip count of at most 16: nvcc and g++ unroll it fully by themselves.
  for (size_t j = 0; j < kElements; ++j) x[j] = reduceElement<T, Op>(x[j], y[j]);
  Pack<kBytes> out;
  memcpy(&out, x, kBytes);
  return out;
}

}  // namespace braid::device
