/*
 * fp16 conversion against the compiler's _Float16 (IEEE binary16, round to
 * nearest even) over a sweep of fp32 values including subnormals, overflow,
 * ties and NaN; bf16 rounding on hand-checked bit patterns.
 */
#include "train/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace braid::train {
namespace {

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float fromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

TEST(Half, Fp16MatchesCompilerConversion) {
  int checked = 0;
  // Every 997th fp32 bit pattern: covers every exponent, sign and many ties.
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 997) {
    float f = fromBits(static_cast<uint32_t>(bits));
    _Float16 reference = static_cast<_Float16>(f);
    uint16_t expected;
    std::memcpy(&expected, &reference, 2);
    uint16_t got = floatToFp16(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(fp16ToFloat(got)));
      continue;
    }
    ASSERT_EQ(got, expected) << "for " << f << " (bits 0x" << std::hex << bits << ")";
    ASSERT_EQ(bitsOf(fp16ToFloat(got)), bitsOf(static_cast<float>(reference)));
    ++checked;
  }
  EXPECT_GT(checked, 4000000);
}

TEST(Half, Fp16Edges) {
  EXPECT_EQ(floatToFp16(65504.0f), 0x7bff);
  EXPECT_EQ(floatToFp16(65520.0f), 0x7c00);  // rounds up to infinity
  EXPECT_EQ(floatToFp16(-1e9f), 0xfc00);
  EXPECT_EQ(floatToFp16(5.9604645e-8f), 0x0001);  // smallest subnormal
  EXPECT_EQ(floatToFp16(2.9802322e-8f), 0x0000);  // exactly half of it: ties to even (zero)
  EXPECT_EQ(fp16ToFloat(0x3c00), 1.0f);
}

TEST(Half, Bf16RoundsToNearestEven) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(fromBits(0x3f808000)), 0x3f80);  // tie, even stays
  EXPECT_EQ(floatToBf16(fromBits(0x3f818000)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(floatToBf16(fromBits(0x3f808001)), 0x3f81);
  EXPECT_EQ(bf16ToFloat(0xc0a0), -5.0f);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(NAN))));
  EXPECT_EQ(floatToBf16(INFINITY), 0x7f80);
}

}  // namespace
}  // namespace braid::train
