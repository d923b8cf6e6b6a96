// The fp8 types through the C API: every reducing op (pre-mul-sum included) on 3 ranks, with
// inputs whose partial results are exact in both formats, so the answer is known whatever
// order the algorithm combines in; and saturation and NaN as braid.h documents them. (The
// conversions and kernels are checked exhaustively in fp8_test.)
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/spawn.h"

namespace braid::testing {
namespace {

// Codes written out from the OCP definitions (e4m3: bias 7, 3 mantissa bits; e5m2: bias 15,
// 2 mantissa bits).
struct Codes {
  braidDataType_t type;
  uint8_t half, one, onePointFive, two, three, six, max, minusMax, inf;
};
constexpr Codes kE4m3{braidFloat8e4m3, 0x30, 0x38, 0x3c, 0x40, 0x44, 0x4c, 0x7e, 0xfe, 0};
constexpr Codes kE5m2{braidFloat8e5m2, 0x38, 0x3c, 0x3e, 0x40, 0x42, 0x46, 0x7b, 0xfb, 0x7c};

uint8_t reduceOne(braidComm_t comm, braidDataType_t type, braidRedOp_t op, uint8_t mine) {
  uint8_t out = 0xaa;
  EXPECT_EQ(braidAllReduce(&mine, &out, 1, type, op, comm, nullptr), braidSuccess)
      << braidGetLastError(comm);
  return out;
}

TEST(ApiFp8, EveryOpOnThreeRanks) {
  spawn(3, [](braidComm_t comm, int rank) {
    for (const Codes& c : {kE4m3, kE5m2}) {
      const std::string name = c.type == braidFloat8e4m3 ? "e4m3" : "e5m2";
      const uint8_t value[] = {c.one, c.two, c.three};  // rank r holds r + 1
      const uint8_t mine = value[rank];
      EXPECT_EQ(reduceOne(comm, c.type, braidSum, mine), c.six) << name;
      EXPECT_EQ(reduceOne(comm, c.type, braidProd, mine), c.six) << name;
      EXPECT_EQ(reduceOne(comm, c.type, braidMax, mine), c.three) << name;
      EXPECT_EQ(reduceOne(comm, c.type, braidMin, mine), c.one) << name;
      EXPECT_EQ(reduceOne(comm, c.type, braidAvg, mine), c.two) << name;
      // Pre-mul-sum with scalar 0.5 * (r + 1) on input 2: 1 + 2 + 3.
      const uint8_t scalars[] = {c.half, c.one, c.onePointFive};
      braidRedOp_t premul;
      ASSERT_EQ(braidRedOpCreatePreMulSum(&premul, const_cast<uint8_t*>(&scalars[rank]), c.type,
                                          braidScalarHostImmediate, comm),
                braidSuccess)
          << braidGetLastError(comm);
      EXPECT_EQ(reduceOne(comm, c.type, premul, c.two), c.six) << name << " pre-mul-sum";
      EXPECT_EQ(braidRedOpDestroy(premul, comm), braidSuccess);
      // Overflow saturates; a NaN anywhere gives 0x7f; e5m2's infinity saturates too.
      EXPECT_EQ(reduceOne(comm, c.type, braidSum, c.max), c.max) << name;
      EXPECT_EQ(reduceOne(comm, c.type, braidSum, c.minusMax), c.minusMax) << name;
      EXPECT_EQ(reduceOne(comm, c.type, braidSum, rank == 1 ? uint8_t{0x7f} : c.one), 0x7f) << name;
      if (c.inf != 0) EXPECT_EQ(reduceOne(comm, c.type, braidMax, c.inf), c.max) << name;
    }
  });
}

}  // namespace
}  // namespace braid::testing
