// Buffers shared by the host-kernel microbenchmarks: 64-byte aligned, touched
// before timing, and filled with bytes 0x3c, which read as finite, normal,
// non-zero values in every element type (fp16 ~1.06, bf16/fp32 ~0.0115,
// fp64 ~1e-17), so that no kernel meets NaNs or subnormals, and a*b stays
// normal too. Results go to a separate buffer, so values never compound.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace braid::bench {

struct FreeDeleter {
  void operator()(void* pointer) const { std::free(pointer); }
};
using Buffer = std::unique_ptr<char, FreeDeleter>;

inline Buffer makeBuffer(size_t bytes) {
  constexpr size_t kAlignment = 64;
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  Buffer buffer(static_cast<char*>(std::aligned_alloc(kAlignment, rounded)));
  if (buffer) std::memset(buffer.get(), 0x3c, rounded);
  return buffer;
}

/// Sizes every kernel is measured at: in L1/L2, in L2/L3, and past the caches.
inline constexpr size_t kBenchBytes[] = {size_t{4} << 10, size_t{256} << 10, size_t{16} << 20};

}  // namespace braid::bench
