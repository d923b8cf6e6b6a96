// The fp8 types (core/fp8.h, core/kernels/reduce_fp8.h) against a reference written here from
// the OCP definitions alone: decoding by the formula sign * 2^(e - bias) * 1.m, and encoding by
// searching all 256 codes for the nearest value (ties to the even code), with saturation and
// NaN as documented in braid.h. Checked: all 256 codes both ways through the scalar
// conversions; every fp32 rounding boundary; and every (a, b) pair of codes through every
// reduction kernel of every ISA this CPU runs, against the fp32 result rounded once.
#include "core/fp8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/kernels/reduce.h"
#include "core/kernels/reduce_dispatch.h"
#include "core/types.h"

namespace braid::coll {
namespace {

struct Format {
  braidDataType_t type;
  const char* name;
  int exponentBits;
  int mantissaBits;
  bool hasInfinity;  // e5m2: IEEE-like; e4m3: only S.1111.111 is special (NaN)
};
constexpr Format kE4m3{braidFloat8e4m3, "e4m3", 4, 3, false};
constexpr Format kE5m2{braidFloat8e5m2, "e5m2", 5, 2, true};
constexpr Format kFormats[] = {kE4m3, kE5m2};

// ---- Reference -----------------------------------------------------------------------------

double decode(const Format& f, uint8_t code) {
  const int bias = (1 << (f.exponentBits - 1)) - 1;
  const int maxField = (1 << f.exponentBits) - 1;
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  const int exponent = (code >> f.mantissaBits) & maxField;
  const int mantissa = code & ((1 << f.mantissaBits) - 1);
  if (f.hasInfinity && exponent == maxField) {
    return mantissa == 0 ? sign * std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::quiet_NaN();
  }
  if (!f.hasInfinity && exponent == maxField && mantissa == (1 << f.mantissaBits) - 1) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (exponent == 0) return sign * std::ldexp(mantissa, 1 - bias - f.mantissaBits);
  return sign * std::ldexp(mantissa + (1 << f.mantissaBits), exponent - bias - f.mantissaBits);
}

// Every code of `f` decoded once (encode searches them all, millions of times).
const std::vector<double>& decodedCodes(const Format& f) {
  static const auto table = [](const Format& format) {
    std::vector<double> values(256);
    for (int code = 0; code < 256; ++code) values[code] = decode(format, uint8_t(code));
    return values;
  };
  static const std::vector<double> e4m3 = table(kE4m3), e5m2 = table(kE5m2);
  return f.type == braidFloat8e4m3 ? e4m3 : e5m2;
}

// Nearest finite code by exhaustive search, ties to the code with an even mantissa; beyond
// the largest finite value (infinities too) saturates to +-max; NaN gives 0x7f.
uint8_t encode(const Format& f, double x) {
  if (std::isnan(x)) return 0x7f;
  const std::vector<double>& values = decodedCodes(f);
  double largest = 0;
  int largestCode = 0;
  for (int code = 0; code < 128; ++code) {
    if (std::isfinite(values[code]) && values[code] > largest) {
      largest = values[code];
      largestCode = code;
    }
  }
  if (std::fabs(x) > largest) return static_cast<uint8_t>(largestCode | (x < 0 ? 0x80 : 0));
  int best = -1;
  double bestError = 0;
  for (int code = 0; code < 256; ++code) {
    const double v = values[code];
    if (!std::isfinite(v)) continue;
    if (v == 0 && (code & 0x80) != (std::signbit(x) ? 0x80 : 0)) continue;  // keep zero's sign
    const double error = std::fabs(v - x);
    const bool better =
        best < 0 || error < bestError || (error == bestError && (code & 1) == 0 && (best & 1) == 1);
    if (better) {
      best = code;
      bestError = error;
    }
  }
  return static_cast<uint8_t>(best);
}

bool isNanCode(const Format& f, uint8_t code) { return std::isnan(decode(f, code)); }

// ---- Scalar conversions --------------------------------------------------------------------

template <class F>
float widen(uint8_t code) {
  return fp8ToFloat<F>(code);
}
float widenAny(const Format& f, uint8_t code) {
  return f.type == braidFloat8e4m3 ? widen<Fp8E4m3Format>(code) : widen<Fp8E5m2Format>(code);
}
uint8_t narrowAny(const Format& f, float x) {
  return f.type == braidFloat8e4m3 ? floatToFp8<Fp8E4m3Format>(x) : floatToFp8<Fp8E5m2Format>(x);
}

TEST(Fp8, EveryCodeWidensExactly) {
  for (const Format& f : kFormats) {
    for (int code = 0; code < 256; ++code) {
      const double want = decode(f, static_cast<uint8_t>(code));
      const float got = widenAny(f, static_cast<uint8_t>(code));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << f.name << " code " << code;
      } else {
        EXPECT_EQ(static_cast<double>(got), want) << f.name << " code " << code;
        EXPECT_EQ(std::signbit(got), std::signbit(want)) << f.name << " code " << code;
      }
    }
  }
}

TEST(Fp8, ReferenceKnowsTheFormats) {  // the reference itself, on values from the OCP spec
  EXPECT_EQ(decode(kE4m3, 0x7e), 448.0);
  EXPECT_TRUE(std::isnan(decode(kE4m3, 0x7f)));
  EXPECT_EQ(decode(kE4m3, 0x78), 256.0);  // S.1111.000 is a number in e4m3
  EXPECT_EQ(decode(kE4m3, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(decode(kE5m2, 0x7b), 57344.0);
  EXPECT_EQ(decode(kE5m2, 0x7c), std::numeric_limits<double>::infinity());
  EXPECT_EQ(decode(kE5m2, 0x01), std::ldexp(1.0, -16));
  EXPECT_EQ(decode(kE5m2, 0x3c), 1.0);
  EXPECT_EQ(decode(kE4m3, 0x38), 1.0);
}

// Every code, both as itself and at the midpoints to its neighbours (the ties) and just off
// them, plus overflow, infinities and NaN.
std::vector<float> narrowingProbes(const Format& f) {
  std::vector<double> finite;
  for (int code = 0; code < 256; ++code) {
    const double v = decode(f, static_cast<uint8_t>(code));
    if (std::isfinite(v)) finite.push_back(v);
  }
  std::vector<float> probes;
  for (double a : finite) {
    probes.push_back(static_cast<float>(a));
    for (double b : finite) {
      if (b <= a) continue;
      bool adjacent = true;
      for (double c : finite) adjacent = adjacent && !(c > a && c < b);
      if (!adjacent) continue;
      const float mid = static_cast<float>((a + b) / 2);  // exact: few mantissa bits
      probes.push_back(mid);
      probes.push_back(std::nextafter(mid, -INFINITY));
      probes.push_back(std::nextafter(mid, INFINITY));
    }
  }
  for (float v : {500.0f, 464.0f, 465.0f, 60000.0f, 61440.0f, 1e30f, 3e38f, 1e-30f, 1e-40f}) {
    probes.push_back(v);
    probes.push_back(-v);
  }
  probes.push_back(INFINITY);
  probes.push_back(-INFINITY);
  probes.push_back(std::numeric_limits<float>::quiet_NaN());
  probes.push_back(-std::numeric_limits<float>::quiet_NaN());
  return probes;
}

TEST(Fp8, ScalarNarrowingMatchesReference) {
  for (const Format& f : kFormats) {
    for (float x : narrowingProbes(f)) {
      EXPECT_EQ(narrowAny(f, x), encode(f, x)) << f.name << " narrowing " << x;
    }
    // Round trip of every non-NaN code is the identity.
    for (int code = 0; code < 256; ++code) {
      if (isNanCode(f, static_cast<uint8_t>(code))) continue;
      const auto c = static_cast<uint8_t>(code);
      if (std::isinf(decode(f, c))) continue;  // saturates by design
      EXPECT_EQ(narrowAny(f, widenAny(f, c)), c) << f.name << " code " << code;
    }
  }
}

TEST(Fp8, SaturatesAsNcclDoes) {
  EXPECT_EQ(floatToFp8<Fp8E4m3Format>(1e6f), 0x7e);
  EXPECT_EQ(floatToFp8<Fp8E4m3Format>(-INFINITY), 0xfe);
  EXPECT_EQ(floatToFp8<Fp8E5m2Format>(INFINITY), 0x7b);
  EXPECT_EQ(floatToFp8<Fp8E5m2Format>(-1e6f), 0xfb);
  EXPECT_EQ(floatToFp8<Fp8E4m3Format>(std::nanf("")), 0x7f);
  EXPECT_EQ(floatToFp8<Fp8E5m2Format>(-std::nanf("")), 0x7f);
}

TEST(Fp8, TypeTables) {
  EXPECT_EQ(braidFloat8e4m3, 10);  // NCCL's ncclFloat8e4m3
  EXPECT_EQ(braidFloat8e5m2, 11);  // NCCL's ncclFloat8e5m2
  EXPECT_EQ(braidNumTypes, 12);
  for (const Format& f : kFormats) {
    EXPECT_EQ(typeSize(f.type), 1u);
    EXPECT_TRUE(isFloatType(f.type));
    EXPECT_EQ(std::string(typeName(f.type)), std::string("float8") + f.name);
  }
}

// ---- Kernels: every pair of codes, every op, every ISA -------------------------------------

double applyOp(braidRedOp_t op, double a, double b) {
  switch (op) {
    case braidSum:
      return a + b;
    case braidProd:
      return a * b;
    case braidMax:
      return std::isnan(a) ? a : std::isnan(b) ? b : (a > b ? a : b);
    default:
      return std::isnan(a) ? a : std::isnan(b) ? b : (a < b ? a : b);
  }
}

// a (op) b computed exactly (double holds every fp8 sum and product exactly), rounded once.
// max/min pick an operand (NaN first; equal operands such as +0, -0 give b, as every float
// kernel does), which then narrows like any result: an e5m2 infinity saturates.
uint8_t expectedPair(const Format& f, braidRedOp_t op, uint8_t a, uint8_t b) {
  return encode(f, applyOp(op, decode(f, a), decode(f, b)));
}

TEST(Fp8, EveryPairThroughEveryKernel) {
  std::vector<uint8_t> a(256 * 256), b(256 * 256), out(256 * 256 + 64);
  for (int i = 0; i < 256; ++i) {
    for (int j = 0; j < 256; ++j) {
      a[i * 256 + j] = static_cast<uint8_t>(i);
      b[i * 256 + j] = static_cast<uint8_t>(j);
    }
  }
  for (const Format& f : kFormats) {
    for (braidRedOp_t op : {braidSum, braidProd, braidMax, braidMin}) {
      std::vector<uint8_t> want(a.size());
      for (size_t k = 0; k < a.size(); ++k) want[k] = expectedPair(f, op, a[k], b[k]);
      for (ReduceIsa isa : {ReduceIsa::kPortable, ReduceIsa::kAvx2, ReduceIsa::kAvx512}) {
        if (!reduceIsaAvailable(isa)) continue;
        for (bool streaming : {false, true}) {
          ReduceFn fn = reducerForIsa(f.type, op, isa, streaming);
          ASSERT_NE(fn, nullptr);
          // Offset by 3 so that the head, body and tail paths all run.
          fn(out.data() + 3, a.data(), b.data(), a.size());
          int failures = 0;
          for (size_t k = 0; k < a.size() && failures < 5; ++k) {
            const uint8_t got = out[3 + k];
            if (got == want[k]) continue;
            ++failures;
            ADD_FAILURE() << reduceIsaName(isa) << " " << f.name << " " << opName(op)
                          << (streaming ? " streaming" : "") << ": codes " << int(a[k]) << ", "
                          << int(b[k]) << " gave " << int(got) << ", expected " << int(want[k]);
          }
        }
      }
    }
  }
}

TEST(Fp8, AverageDividesOnceAndRounds) {
  for (ReduceIsa isa : {ReduceIsa::kPortable, ReduceIsa::kAvx2, ReduceIsa::kAvx512}) {
    if (!reduceIsaAvailable(isa)) continue;
    for (const Format& f : kFormats) {
      for (int divisor : {1, 3, 7}) {
        std::vector<uint8_t> data(256 + 5);
        for (int code = 0; code < 256; ++code) data[code] = static_cast<uint8_t>(code);
        DivideFn fn = dividerForIsa(f.type, isa);
        ASSERT_NE(fn, nullptr);
        fn(data.data(), 256, divisor);
        for (int code = 0; code < 256; ++code) {
          const uint8_t want = encode(f, decode(f, static_cast<uint8_t>(code)) / divisor);
          EXPECT_EQ(data[code], want)
              << reduceIsaName(isa) << " " << f.name << " code " << code << " / " << divisor;
        }
      }
    }
  }
}

}  // namespace
}  // namespace braid::coll
