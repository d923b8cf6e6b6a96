// Streaming copies (core/kernels/copy.h) against std::memcpy: every variant
// the CPU runs, over sizes that hit each split (below the streaming minimum,
// head only, whole 128-byte blocks, blocks plus a tail, large), with source
// and destination at every offset within a cache line; the bytes either side
// of the destination must stay untouched.
#include "core/kernels/copy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace braid::coll {
namespace {

constexpr CopyIsa kAllIsas[] = {CopyIsa::kPortable, CopyIsa::kSse2, CopyIsa::kAvx2};
constexpr size_t kSizes[] = {0,
                             1,
                             15,
                             63,
                             64,
                             127,
                             128,
                             129,
                             255,
                             256,
                             257,
                             383,
                             511,
                             4096,
                             4099,
                             65536 + 77,
                             size_t{1} << 20};
constexpr size_t kGuard = 64;  // bytes either side of the destination that must not change

std::vector<uint8_t> randomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// Copies `bytes` from source offset `srcOff` to destination offset `dstOff` with `copy` and
// with memcpy into a twin buffer; the two destination buffers must be equal throughout.
template <typename Copy>
void expectLikeMemcpy(Copy copy, size_t bytes, size_t srcOff, size_t dstOff) {
  // 64-byte aligned bases, so the offsets decide the alignment.
  std::vector<uint8_t> srcStore = randomBytes(bytes + 128, static_cast<uint32_t>(bytes + srcOff));
  const size_t dstStoreBytes = bytes + 2 * kGuard + 128;
  std::vector<uint8_t> got = randomBytes(dstStoreBytes, 7), want = got;
  auto aligned = [](uint8_t* p) { return p + ((64 - reinterpret_cast<uintptr_t>(p) % 64) % 64); };
  const uint8_t* src = aligned(srcStore.data()) + srcOff;
  size_t dstPos = (aligned(got.data()) - got.data()) + kGuard + dstOff;
  if (dstPos + bytes + kGuard > dstStoreBytes) dstPos -= 64;  // stays within the guard
  copy(got.data() + dstPos, src, bytes);
  std::memcpy(want.data() + dstPos, src, bytes);
  ASSERT_EQ(std::memcmp(got.data(), want.data(), dstStoreBytes), 0)
      << bytes << " bytes, source offset " << srcOff << ", destination offset " << dstOff;
}

TEST(CopyTest, EveryVariantMatchesMemcpyAtEverySizeAndAlignment) {
  int tested = 0;
  for (CopyIsa isa : kAllIsas) {
    if (!copyIsaAvailable(isa)) continue;
    ++tested;
    SCOPED_TRACE(copyIsaName(isa));
    for (size_t bytes : kSizes) {
      for (size_t srcOff : {0, 1, 8, 31, 32, 63}) {
        for (size_t dstOff : {0, 1, 16, 33, 63}) {
          expectLikeMemcpy([isa](void* d, const void* s,
                                 size_t n) { ASSERT_TRUE(copyStreamingForIsa(isa, d, s, n)); },
                           bytes, srcOff, dstOff);
        }
      }
    }
  }
  EXPECT_GE(tested, 1);  // the portable variant runs everywhere
}

TEST(CopyTest, DispatchedCopiesMatchMemcpy) {
  EXPECT_TRUE(copyIsaAvailable(streamingCopyIsa()));
  for (size_t bytes : kSizes) {
    for (bool streaming : {false, true}) {
      expectLikeMemcpy(
          [streaming](void* d, const void* s, size_t n) { copyInto(d, s, n, streaming); }, bytes, 3,
          5);
    }
    expectLikeMemcpy([](void* d, const void* s, size_t n) { copyStreaming(d, s, n); }, bytes, 0, 0);
  }
}

TEST(CopyTest, DefaultThresholdSharesTheLastLevelCache) {
  const size_t cache = lastLevelCacheBytes();
  EXPECT_GE(cache, size_t{64} << 10);  // every CPU this runs on has at least that much
  EXPECT_EQ(defaultStreamStoreBytes(1), cache);
  EXPECT_EQ(defaultStreamStoreBytes(4), cache / 4);
  EXPECT_EQ(defaultStreamStoreBytes(0), cache);  // nonsense counts do not divide by zero
}

TEST(CopyTest, UnavailableVariantCopiesNothing) {
  uint8_t src[4] = {1, 2, 3, 4}, dst[4] = {};
  for (CopyIsa isa : kAllIsas) {
    if (copyIsaAvailable(isa)) continue;
    EXPECT_FALSE(copyStreamingForIsa(isa, dst, src, sizeof(src)));
    EXPECT_EQ(dst[0], 0);
  }
}

}  // namespace
}  // namespace braid::coll
