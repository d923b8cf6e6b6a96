// The device executor's element arithmetic (collectives/device/element_ops.h), compiled here
// as host code, must give the host executor's results bit for bit: every type and op over
// random bit patterns (NaNs, infinities and subnormals included for the floats), and avg's
// division. The host kernels (core/kernels/reduce.h) are the reference. One exception:
// when sum or prod combines two NaNs, which payload survives is the hardware's choice (x86
// keeps the first operand's, GPUs return a canonical NaN), so there any NaN is accepted.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "collectives/device/element_ops.h"
#include "collectives/device/pack.h"
#include "core/kernels/reduce.h"
#include "support/element_bits.h"

namespace braid::device {
namespace {

constexpr size_t kCount = 1 << 14;

std::vector<uint8_t> randomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (auto& b : out) b = uint8_t(rng());
  return out;
}

template <class T>
void checkType(braidDataType_t type) {
  const size_t bytes = kCount * sizeof(T);
  const std::vector<uint8_t> a = randomBytes(bytes, 1 + type), b = randomBytes(bytes, 100 + type);
  for (braidRedOp_t op : {braidSum, braidProd, braidMax, braidMin}) {
    std::vector<uint8_t> want(bytes), got(bytes);
    coll::reducerFor(type, op)(want.data(), a.data(), b.data(), kCount);
    // Through packs, as the primitives do (16-byte packs: the Simple protocol).
    withOp(op, [&](auto tag) {
      using Op = decltype(tag);
      for (size_t at = 0; at < bytes; at += 16) {
        const Pack<16> r =
            reducePack<T, Op, 16>(loadPack<16>(&a[at], 16), loadPack<16>(&b[at], 16));
        storePack(&got[at], r, 16);
      }
    });
    for (size_t i = 0; i < kCount; ++i) {
      const uint64_t w = testing::loadRaw(type, want.data(), i);
      const uint64_t g = testing::loadRaw(type, got.data(), i);
      const bool bothNan = testing::isFloating(type) && std::isnan(testing::rawToDouble(type, w)) &&
                           std::isnan(testing::rawToDouble(type, g));
      if (w != g && !(bothNan && (op == braidSum || op == braidProd))) {
        FAIL() << testing::typeLabel(type) << " " << testing::opLabel(op) << " element " << i
               << ": host " << testing::formatRaw(type, w) << ", device "
               << testing::formatRaw(type, g);
      }
    }
  }
  for (int divisor : {1, 3, 7, 200}) {
    std::vector<uint8_t> want = a, got = a;
    coll::dividerFor(type)(want.data(), kCount, divisor);
    for (size_t i = 0; i < kCount; ++i) {
      T x;
      std::memcpy(&x, &got[i * sizeof(T)], sizeof(T));
      x = divideElement<T>(x, divisor);
      std::memcpy(&got[i * sizeof(T)], &x, sizeof(T));
    }
    ASSERT_EQ(0, std::memcmp(want.data(), got.data(), bytes))
        << testing::typeLabel(type) << " / " << divisor;
  }
}

TEST(DeviceElementOps, MatchTheHostKernelsBitForBit) {
  for (int t = 0; t < braidNumTypes; ++t) {
    const auto type = braidDataType_t(t);
    SCOPED_TRACE(testing::typeLabel(type));
    ASSERT_TRUE(withType(type, [&](auto tag) { checkType<decltype(tag)>(type); }));
  }
}

TEST(DeviceElementOps, HalfConversionsRoundTripEveryValue) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const Half h{uint16_t(bits)};
    const bool nan = (bits & 0x7fff) > 0x7c00;
    const uint16_t back = floatToHalf(halfToFloat(h)).bits;
    // Finite values and infinities survive exactly; NaNs come back quiet, sign kept.
    if (nan) {
      EXPECT_EQ(back, uint16_t(bits | 0x0200)) << bits;
    } else {
      EXPECT_EQ(back, bits) << bits;
      EXPECT_EQ(double(halfToFloat(h)), testing::halfToDouble(uint16_t(bits))) << bits;
    }
    const Bf16 b{uint16_t(bits)};
    const bool bnan = (bits & 0x7fff) > 0x7f80;
    EXPECT_EQ(floatToBf16(bf16ToFloat(b)).bits, bnan ? uint16_t(bits | 0x0040) : bits) << bits;
  }
}

TEST(DeviceElementOps, WithTypeRejectsInvalidEnums) {
  EXPECT_FALSE(withType(braidNumTypes, [](auto) {}));
}

}  // namespace
}  // namespace braid::device
