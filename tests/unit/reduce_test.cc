// Host reduction kernels against a reference written independently here: integers through
// 128-bit arithmetic, floats through double (correctly rounded for +, *, / on the narrower
// types, since double has more than twice their precision plus two bits), and fp16/bf16
// through a slow field-by-field codec. Every type x op x ISA the CPU runs, over lengths that
// hit each tail shape, with dst separate, dst == a and dst == b; results must match exactly
// (any NaN matches any NaN, whose payload the library leaves unspecified, but fp16/bf16 NaNs
// must come out quiet).
#include "core/kernels/reduce.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/kernels/reduce_dispatch.h"

namespace braid::coll {
namespace {

constexpr ReduceIsa kAllIsas[] = {ReduceIsa::kPortable, ReduceIsa::kAvx2, ReduceIsa::kAvx512};
constexpr braidRedOp_t kOps[] = {braidSum, braidProd, braidMax, braidMin};
constexpr braidDataType_t kTypes[] = {braidInt8,    braidUint8,   braidInt32,   braidUint32,
                                      braidInt64,   braidUint64,  braidFloat16, braidFloat32,
                                      braidFloat64, braidBfloat16};
constexpr size_t kLengths[] = {0, 1, 7, 15, 16, 17, 33, 1000, 4099};
constexpr size_t kGuard = 5;  // elements either side of dst that must stay untouched

// ---- 16-bit float formats, decoded and encoded field by field ----------------------------

struct HalfFormat {
  int mantissaBits;
  int exponentBits;
  int bias() const { return (1 << (exponentBits - 1)) - 1; }
  int maxExponentField() const { return (1 << exponentBits) - 1; }
};
constexpr HalfFormat kFp16{10, 5};
constexpr HalfFormat kBf16{7, 8};

double decodeHalf(uint16_t bits, HalfFormat f) {
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  const int exponent = (bits >> f.mantissaBits) & f.maxExponentField();
  const int mantissa = bits & ((1 << f.mantissaBits) - 1);
  if (exponent == f.maxExponentField()) return mantissa ? std::nan("") : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, 1 - f.bias() - f.mantissaBits);
  return sign * std::ldexp(mantissa + (1 << f.mantissaBits), exponent - f.bias() - f.mantissaBits);
}

// Rounds to nearest, ties to even, by scaling to an integer count of the target's quantum.
uint16_t encodeHalf(double x, HalfFormat f) {
  const int infBits = f.maxExponentField() << f.mantissaBits;
  if (std::isnan(x)) return static_cast<uint16_t>(infBits | (1 << (f.mantissaBits - 1)));
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isinf(x)) return sign | infBits;
  const double magnitude = std::fabs(x);
  const int minExponent = 1 - f.bias();  // of the smallest normal
  int exponent = minExponent;
  if (magnitude >= std::ldexp(1.0, minExponent)) {
    std::frexp(magnitude, &exponent);
    exponent -= 1;  // magnitude in [2^exponent, 2^(exponent+1))
  }
  const double quantum = std::ldexp(1.0, exponent - f.mantissaBits);
  const double rounded = std::nearbyint(magnitude / quantum) * quantum;  // default mode: RNE
  if (rounded >= std::ldexp(1.0, f.bias() + 1)) return sign | infBits;
  if (rounded < std::ldexp(1.0, minExponent)) {  // subnormal or zero
    return sign | static_cast<uint16_t>(rounded / std::ldexp(1.0, minExponent - f.mantissaBits));
  }
  int roundedExponent;
  std::frexp(rounded, &roundedExponent);
  roundedExponent -= 1;
  const auto mantissa =
      static_cast<int>(rounded / std::ldexp(1.0, roundedExponent - f.mantissaBits));
  return sign | static_cast<uint16_t>(((roundedExponent + f.bias()) << f.mantissaBits) |
                                      (mantissa - (1 << f.mantissaBits)));
}

// ---- Reference element operations ----------------------------------------------------------

double referenceFloat(braidRedOp_t op, double a, double b) {
  if (op == braidSum) return a + b;
  if (op == braidProd) return a * b;
  // max and min: NaN propagates (a's first); equal operands give b.
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (op == braidMax) return a > b ? a : b;
  return a < b ? a : b;
}

template <class T>
T referenceInteger(braidRedOp_t op, T a, T b) {
  // Wide enough for any product of two 64-bit values; the conversion back wraps (C++20).
  using Wide = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
  if (op == braidSum) return static_cast<T>(static_cast<Wide>(a) + static_cast<Wide>(b));
  if (op == braidProd) return static_cast<T>(static_cast<Wide>(a) * static_cast<Wide>(b));
  if (op == braidMax) return a > b ? a : b;
  return a < b ? a : b;
}

// One element type as the test sees it: bytes in memory, reference op, exact comparison.
struct Element {
  size_t size;
  // a (op) b, or a / divisor when op is braidAvg (the divide kernel's reference; b unused).
  void (*reference)(braidRedOp_t op, const void* a, const void* b, int divisor, void* out);
  bool (*isNan)(const void* value);
  uint16_t quietNanBit;  // fp16/bf16 kernels store only quiet NaNs; 0 for other types
};

template <class T>
Element integerElement() {
  return {sizeof(T),
          [](braidRedOp_t op, const void* a, const void* b, int divisor, void* out) {
            T x, y, r;
            std::memcpy(&x, a, sizeof(T));
            std::memcpy(&y, b, sizeof(T));
            r = op == braidAvg ? static_cast<T>(static_cast<__int128>(x) / divisor)
                               : referenceInteger(op, x, y);
            std::memcpy(out, &r, sizeof(T));
          },
          [](const void*) { return false; }, 0};
}

template <class T>
Element floatElement() {
  return {sizeof(T),
          [](braidRedOp_t op, const void* a, const void* b, int divisor, void* out) {
            T x, y;
            std::memcpy(&x, a, sizeof(T));
            std::memcpy(&y, b, sizeof(T));
            const double exact =
                op == braidAvg ? static_cast<double>(x) / divisor : referenceFloat(op, x, y);
            const T r = static_cast<T>(exact);
            std::memcpy(out, &r, sizeof(T));
          },
          [](const void* v) {
            T x;
            std::memcpy(&x, v, sizeof(T));
            return std::isnan(x);
          },
          0};
}

template <const HalfFormat& kFormat>
Element halfElement() {
  return {2,
          [](braidRedOp_t op, const void* a, const void* b, int divisor, void* out) {
            uint16_t x, y;
            std::memcpy(&x, a, 2);
            std::memcpy(&y, b, 2);
            const double wideA = decodeHalf(x, kFormat);
            const double exact = op == braidAvg ? wideA / divisor
                                                : referenceFloat(op, wideA, decodeHalf(y, kFormat));
            const uint16_t r = encodeHalf(exact, kFormat);
            std::memcpy(out, &r, 2);
          },
          [](const void* v) {
            uint16_t x;
            std::memcpy(&x, v, 2);
            return std::isnan(decodeHalf(x, kFormat));
          },
          static_cast<uint16_t>(1 << (kFormat.mantissaBits - 1))};
}

Element elementFor(braidDataType_t type) {
  static const Element kElements[braidNumTypes] = {
      integerElement<int8_t>(),   integerElement<uint8_t>(), integerElement<int32_t>(),
      integerElement<uint32_t>(), integerElement<int64_t>(), integerElement<uint64_t>(),
      halfElement<kFp16>(),       floatElement<float>(),     floatElement<double>(),
      halfElement<kBf16>()};
  return kElements[type];
}

// ---- Test data -----------------------------------------------------------------------------

template <class T>
void put(std::vector<uint8_t>& bytes, size_t index, T value) {
  std::memcpy(bytes.data() + index * sizeof(T), &value, sizeof(T));
}

// Special values of each float type, including NaN, Inf, zeros, subnormals and overflow bait.
std::vector<uint64_t> specialBits(braidDataType_t type) {
  switch (type) {
    case braidFloat16:
      return {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x3c01,
              0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7d01, 0xfe00, 0x1400, 0x5bff};
    case braidBfloat16:
      return {0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0080, 0x3f80, 0xbf80, 0x3f81,
              0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffc0, 0x0101, 0x4b7f};
    case braidFloat32:
      return {0x00000000, 0x80000000, 0x00000001, 0x007fffff, 0x00800000, 0x3f800000,
              0xbf800000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000,
              0x7f800001, 0xffc00000, 0x33800000, 0x4b800001};
    default:  // float64
      return {0x0000000000000000, 0x8000000000000000, 0x0000000000000001, 0x0010000000000000,
              0x3ff0000000000000, 0xbff0000000000000, 0x7fefffffffffffff, 0x7ff0000000000000,
              0xfff0000000000000, 0x7ff8000000000000, 0x7ff0000000000001, 0x3ca0000000000000};
  }
}

// Random bits (every class of value, and integer wrap-around), moderate values (meaningful
// sums and products), and the special values.
std::vector<uint8_t> makeData(braidDataType_t type, size_t n, uint32_t seed) {
  const size_t size = elementFor(type).size;
  std::vector<uint8_t> bytes(n * size);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> moderate(-300.0, 300.0);
  const bool isFloat =
      type == braidFloat16 || type == braidBfloat16 || type == braidFloat32 || type == braidFloat64;
  const std::vector<uint64_t> specials = isFloat ? specialBits(type) : std::vector<uint64_t>{};
  for (size_t i = 0; i < n; ++i) {
    uint64_t bits = rng();
    const unsigned kind = rng() % 8;
    if (isFloat && kind == 0) {
      bits = specials[rng() % specials.size()];
    } else if (isFloat && kind >= 4) {
      const double value = moderate(rng);
      if (type == braidFloat16) bits = encodeHalf(value, kFp16);
      if (type == braidBfloat16) bits = encodeHalf(value, kBf16);
      if (type == braidFloat32) bits = std::bit_cast<uint32_t>(static_cast<float>(value));
      if (type == braidFloat64) bits = std::bit_cast<uint64_t>(value);
    }
    std::memcpy(bytes.data() + i * size, &bits, size);  // little-endian: the low bytes
  }
  return bytes;
}

std::string hex(const uint8_t* p, size_t size) {
  uint64_t bits = 0;
  std::memcpy(&bits, p, size);
  char text[24];
  std::snprintf(text, sizeof text, "0x%0*llx", static_cast<int>(2 * size),
                static_cast<unsigned long long>(bits));
  return text;
}

// Expects got[i] to equal `expected` element-wise, NaN matching any NaN.
void expectElementsEqual(braidDataType_t type, const uint8_t* got, const uint8_t* expected,
                         size_t n, const std::string& context) {
  const Element element = elementFor(type);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* g = got + i * element.size;
    const uint8_t* e = expected + i * element.size;
    const bool bothNan = element.isNan(g) && element.isNan(e);
    uint16_t gotHalf = 0;
    if (element.quietNanBit != 0) std::memcpy(&gotHalf, g, 2);
    const bool quietIfNan =
        !element.isNan(g) || (gotHalf & element.quietNanBit) == element.quietNanBit;
    if (!((std::memcmp(g, e, element.size) == 0 || bothNan) && quietIfNan)) {
      ADD_FAILURE() << context << ": element " << i << " of " << n << " is " << hex(g, element.size)
                    << ", expected " << hex(e, element.size);
      return;
    }
  }
}

// dst = a (op) b through `kernel`, in one of three aliasing modes, with guard elements around
// dst; returns dst's n elements after checking the guards.
enum class Aliasing { kSeparate, kDstIsA, kDstIsB };

std::vector<uint8_t> runKernel(ReduceFn kernel, size_t size, const std::vector<uint8_t>& a,
                               const std::vector<uint8_t>& b, size_t n, Aliasing aliasing) {
  const uint8_t kCanary = 0xa5;
  const size_t bytes = n * size;
  // Each buffer sits kGuard elements into a larger one: misaligned for vectors, and the
  // surrounding bytes reveal any write past either end.
  std::vector<uint8_t> bufA(bytes + 2 * kGuard * size, kCanary);
  std::vector<uint8_t> bufB(bufA.size(), kCanary);
  std::vector<uint8_t> bufDst(bufA.size(), kCanary);
  uint8_t* pa = bufA.data() + kGuard * size;
  uint8_t* pb = bufB.data() + kGuard * size;
  if (bytes > 0) {
    std::memcpy(pa, a.data(), bytes);
    std::memcpy(pb, b.data(), bytes);
  }
  uint8_t* dst = aliasing == Aliasing::kDstIsA   ? pa
                 : aliasing == Aliasing::kDstIsB ? pb
                                                 : bufDst.data() + kGuard * size;
  kernel(dst, pa, pb, n);
  for (const auto* buf : {&bufA, &bufB, &bufDst}) {
    for (size_t i = 0; i < kGuard * size; ++i) {
      EXPECT_EQ((*buf)[i], kCanary) << "write before the buffer";
      EXPECT_EQ((*buf)[buf->size() - 1 - i], kCanary) << "write past the buffer";
    }
  }
  if (aliasing != Aliasing::kDstIsA && bytes > 0) {
    EXPECT_EQ(std::memcmp(pa, a.data(), bytes), 0) << "input a was modified";
  }
  if (aliasing != Aliasing::kDstIsB && bytes > 0) {
    EXPECT_EQ(std::memcmp(pb, b.data(), bytes), 0) << "input b was modified";
  }
  return std::vector<uint8_t>(dst, dst + bytes);
}

std::vector<uint8_t> referenceReduce(braidDataType_t type, braidRedOp_t op,
                                     const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                                     size_t n) {
  const Element element = elementFor(type);
  std::vector<uint8_t> out(n * element.size);
  for (size_t i = 0; i < n; ++i) {
    const size_t at = i * element.size;
    element.reference(op, &a[at], &b[at], 0, &out[at]);
  }
  return out;
}

const char* aliasingName(Aliasing aliasing) {
  return aliasing == Aliasing::kSeparate ? "dst separate"
         : aliasing == Aliasing::kDstIsA ? "dst == a"
                                         : "dst == b";
}

// ---- Every type x op x ISA -----------------------------------------------------------------

using KernelCase = std::tuple<ReduceIsa, braidDataType_t, braidRedOp_t>;

class ReduceKernelTest : public ::testing::TestWithParam<KernelCase> {};

TEST_P(ReduceKernelTest, MatchesReferenceForEveryLengthAndAliasing) {
  const auto [isa, type, op] = GetParam();
  const ReduceFn kernel = reducerForIsa(type, op, isa);
  if (kernel == nullptr && !reduceIsaAvailable(isa)) {
    GTEST_SKIP() << reduceIsaName(isa) << " is not available on this machine";
  }
  const ReduceFn streaming = reducerForIsa(type, op, isa, /*streaming=*/true);
  ASSERT_NE(kernel, nullptr);
  ASSERT_NE(streaming, nullptr);
  EXPECT_EQ(op == braidSum ? reducerForIsa(type, braidAvg, isa) : kernel, kernel)
      << "avg must reuse the sum kernel";
  const size_t size = elementFor(type).size;
  uint32_t seed = 1;
  for (size_t n : kLengths) {
    const std::vector<uint8_t> a = makeData(type, n, seed++);
    const std::vector<uint8_t> b = makeData(type, n, seed++);
    const std::vector<uint8_t> expected = referenceReduce(type, op, a, b, n);
    for (Aliasing aliasing : {Aliasing::kSeparate, Aliasing::kDstIsA, Aliasing::kDstIsB}) {
      const std::vector<uint8_t> got = runKernel(kernel, size, a, b, n, aliasing);
      expectElementsEqual(type, got.data(), expected.data(), n,
                          "n=" + std::to_string(n) + ", " + aliasingName(aliasing));
      const std::vector<uint8_t> streamed = runKernel(streaming, size, a, b, n, aliasing);
      expectElementsEqual(type, streamed.data(), expected.data(), n,
                          "streaming, n=" + std::to_string(n) + ", " + aliasingName(aliasing));
    }
  }
}

std::string kernelCaseName(const ::testing::TestParamInfo<KernelCase>& info) {
  static const char* const kTypeNames[] = {"int8",   "uint8",   "int32",   "uint32",  "int64",
                                           "uint64", "float16", "float32", "float64", "bfloat16"};
  static const char* const kOpNames[] = {"sum", "prod", "max", "min"};
  const auto [isa, type, op] = info.param;
  return std::string(reduceIsaName(isa)) + "_" + kTypeNames[type] + "_" + kOpNames[op];
}

// The streaming kernel switches between cached and non-temporal stores at dst's first 64-byte
// boundary and before its last partial block: every start offset within a line, with lengths
// around the block sizes, must still give the reference's elements and touch nothing else.
TEST_P(ReduceKernelTest, StreamingMatchesReferenceAtEveryLineOffset) {
  const auto [isa, type, op] = GetParam();
  const ReduceFn streaming = reducerForIsa(type, op, isa, /*streaming=*/true);
  if (streaming == nullptr && !reduceIsaAvailable(isa)) {
    GTEST_SKIP() << reduceIsaName(isa) << " is not available on this machine";
  }
  ASSERT_NE(streaming, nullptr);
  const size_t size = elementFor(type).size;
  const uint8_t kCanary = 0x5a;
  uint32_t seed = 7;
  for (size_t n : {size_t{1}, size_t{31}, size_t{64}, size_t{65}, size_t{200}, size_t{1027}}) {
    const std::vector<uint8_t> a = makeData(type, n, seed++);
    const std::vector<uint8_t> b = makeData(type, n, seed++);
    const std::vector<uint8_t> expected = referenceReduce(type, op, a, b, n);
    for (size_t shift = 0; shift < 64; shift += size) {
      // dst starts `shift` bytes past a 64-byte boundary, a canary line on either side.
      std::vector<uint8_t> buffer(n * size + 3 * 64 + 64, kCanary);
      uint8_t* line = buffer.data() + (64 - reinterpret_cast<uintptr_t>(buffer.data()) % 64);
      uint8_t* dst = line + 64 + shift;
      streaming(dst, a.data(), b.data(), n);
      const std::string where =
          "n=" + std::to_string(n) + ", dst at line offset " + std::to_string(shift);
      expectElementsEqual(type, dst, expected.data(), n, where);
      for (const uint8_t* p = buffer.data(); p < dst; ++p) {
        ASSERT_EQ(*p, kCanary) << "write before dst, " << where;
      }
      for (const uint8_t* p = dst + n * size; p < buffer.data() + buffer.size(); ++p) {
        ASSERT_EQ(*p, kCanary) << "write past dst, " << where;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, ReduceKernelTest,
                         ::testing::Combine(::testing::ValuesIn(kAllIsas),
                                            ::testing::ValuesIn(kTypes), ::testing::ValuesIn(kOps)),
                         kernelCaseName);

// ---- Special float values, every pair ------------------------------------------------------

TEST(ReduceKernelSpecials, EveryPairOfSpecialValues) {
  for (braidDataType_t type : {braidFloat16, braidBfloat16, braidFloat32, braidFloat64}) {
    const size_t size = elementFor(type).size;
    const std::vector<uint64_t> specials = specialBits(type);
    const size_t n = specials.size() * specials.size();
    std::vector<uint8_t> a(n * size), b(n * size);
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(&a[i * size], &specials[i / specials.size()], size);
      std::memcpy(&b[i * size], &specials[i % specials.size()], size);
    }
    for (ReduceIsa isa : kAllIsas) {
      if (!reduceIsaAvailable(isa)) continue;
      for (braidRedOp_t op : kOps) {
        const std::vector<uint8_t> got =
            runKernel(reducerForIsa(type, op, isa), size, a, b, n, Aliasing::kSeparate);
        expectElementsEqual(type, got.data(), referenceReduce(type, op, a, b, n).data(), n,
                            std::string(reduceIsaName(isa)) + " type " + std::to_string(type) +
                                " op " + std::to_string(op));
      }
    }
  }
}

// ---- fp16 / bf16 conversions over all 65536 encodings --------------------------------------

// Every encoding x against a fixed partner, so that both conversions see every input: widening
// sees x, and narrowing sees every rounding case the op produces (x + -0 is x itself, x * 0.5
// and x / 3 round, many into subnormals).
TEST(ReduceKernelHalf, AllEncodingsThroughEveryConversion) {
  constexpr size_t n = 1 << 16;
  for (braidDataType_t type : {braidFloat16, braidBfloat16}) {
    const HalfFormat& format = type == braidFloat16 ? kFp16 : kBf16;
    std::vector<uint8_t> all(2 * n);
    for (size_t i = 0; i < n; ++i) put<uint16_t>(all, i, static_cast<uint16_t>(i));
    struct Partner {
      braidRedOp_t op;
      double value;
    };
    for (Partner partner :
         {Partner{braidSum, -0.0}, Partner{braidMax, -INFINITY}, Partner{braidProd, 0.5},
          Partner{braidProd, 1.0 / 1024}, Partner{braidSum, 1.0}}) {
      std::vector<uint8_t> other(2 * n);
      for (size_t i = 0; i < n; ++i) put<uint16_t>(other, i, encodeHalf(partner.value, format));
      const std::vector<uint8_t> expected = referenceReduce(type, partner.op, all, other, n);
      for (ReduceIsa isa : kAllIsas) {
        if (!reduceIsaAvailable(isa)) continue;
        const std::vector<uint8_t> got =
            runKernel(reducerForIsa(type, partner.op, isa), 2, all, other, n, Aliasing::kSeparate);
        expectElementsEqual(type, got.data(), expected.data(), n,
                            std::string(reduceIsaName(isa)) + " op " + std::to_string(partner.op) +
                                " with " + std::to_string(partner.value));
      }
    }
  }
}

TEST(ReduceKernelHalf, ReferenceCodecKnownValues) {
  // Guards the test's own reference against a shared misunderstanding with the library.
  EXPECT_EQ(encodeHalf(1.0, kFp16), 0x3c00);
  EXPECT_EQ(encodeHalf(65504.0, kFp16), 0x7bff);
  EXPECT_EQ(encodeHalf(65519.0, kFp16), 0x7bff);
  EXPECT_EQ(encodeHalf(65520.0, kFp16), 0x7c00);    // ties to even: up to Inf
  EXPECT_EQ(encodeHalf(0x1p-24, kFp16), 0x0001);    // smallest subnormal
  EXPECT_EQ(encodeHalf(0x1p-25, kFp16), 0x0000);    // tie to even: down to zero
  EXPECT_EQ(encodeHalf(0x1.8p-24, kFp16), 0x0002);  // tie to even: up
  EXPECT_EQ(encodeHalf(-0.0, kFp16), 0x8000);
  EXPECT_EQ(encodeHalf(1.0 + 0x1p-11, kFp16), 0x3c00);  // tie, even is down
  EXPECT_EQ(encodeHalf(1.0 + 0x3p-11, kFp16), 0x3c02);  // tie, even is up
  EXPECT_EQ(encodeHalf(1.0, kBf16), 0x3f80);
  EXPECT_EQ(encodeHalf(1.0 + 0x1p-8, kBf16), 0x3f80);
  EXPECT_EQ(encodeHalf(1.0 + 0x3p-8, kBf16), 0x3f82);
  EXPECT_EQ(encodeHalf(0x1p-133, kBf16), 0x0001);
  EXPECT_EQ(decodeHalf(0x0001, kFp16), 0x1p-24);
  EXPECT_EQ(decodeHalf(0xfbff, kFp16), -65504.0);
  EXPECT_TRUE(std::isnan(decodeHalf(0x7f81, kBf16)));
}

// ---- Divide ---------------------------------------------------------------------------------

TEST(ReduceDivide, MatchesReferenceForEveryTypeAndIsa) {
  for (ReduceIsa isa : kAllIsas) {
    if (!reduceIsaAvailable(isa)) continue;
    for (braidDataType_t type : kTypes) {
      const DivideFn divide = dividerForIsa(type, isa);
      ASSERT_NE(divide, nullptr);
      const Element element = elementFor(type);
      for (size_t n : {size_t{0}, size_t{1}, size_t{17}, size_t{4099}}) {
        const std::vector<uint8_t> data = makeData(type, n, static_cast<uint32_t>(n) + 7);
        for (int divisor : {1, 2, 3, 7, 200}) {
          std::vector<uint8_t> expected(data.size());
          for (size_t i = 0; i < n; ++i) {
            const size_t at = i * element.size;
            element.reference(braidAvg, &data[at], &data[at], divisor, &expected[at]);
          }
          std::vector<uint8_t> got = data;
          divide(got.data(), n, divisor);
          expectElementsEqual(type, got.data(), expected.data(), n,
                              std::string(reduceIsaName(isa)) + " type " + std::to_string(type) +
                                  " n=" + std::to_string(n) + " / " + std::to_string(divisor));
        }
      }
      std::vector<uint8_t> untouched = makeData(type, 9, 3);
      std::vector<uint8_t> got = untouched;
      divide(got.data(), 9, 0);
      divide(got.data(), 9, -1);
      EXPECT_EQ(got, untouched) << "non-positive divisors leave dst unchanged";
    }
  }
}

// ---- Agreement between ISAs on uniformly random bits ----------------------------------------

// Which NaN a + b returns when both are NaN depends on operand order, which the compiler may
// commute, so NaN payloads are not compared.
TEST(ReduceKernelIsas, AllIsasAgreeOnRandomBits) {
  for (braidDataType_t type : kTypes) {
    const size_t size = elementFor(type).size;
    const size_t n = 1031;
    std::vector<uint8_t> a(n * size), b(n * size);
    std::mt19937_64 rng(static_cast<uint64_t>(type) + 99);
    for (auto& byte : a) byte = static_cast<uint8_t>(rng());
    for (auto& byte : b) byte = static_cast<uint8_t>(rng());
    for (braidRedOp_t op : kOps) {
      const std::vector<uint8_t> portable = runKernel(reducerForIsa(type, op, ReduceIsa::kPortable),
                                                      size, a, b, n, Aliasing::kSeparate);
      for (ReduceIsa isa : {ReduceIsa::kAvx2, ReduceIsa::kAvx512}) {
        if (!reduceIsaAvailable(isa)) continue;
        const std::vector<uint8_t> got =
            runKernel(reducerForIsa(type, op, isa), size, a, b, n, Aliasing::kSeparate);
        expectElementsEqual(type, got.data(), portable.data(), n,
                            std::string(reduceIsaName(isa)) + " vs portable, type " +
                                std::to_string(type) + " op " + std::to_string(op));
      }
    }
  }
}

// ---- Dispatch --------------------------------------------------------------------------------

TEST(ReduceDispatch, PublicLookupsCoverValidEnumsOnly) {
  const std::optional<ReduceIsa> chosen = parseReduceIsa(reduceIsa());
  ASSERT_TRUE(chosen.has_value()) << reduceIsa();
  EXPECT_TRUE(reduceIsaAvailable(*chosen));
  EXPECT_EQ(*chosen, chooseReduceIsa(std::getenv("BRAID_REDUCE_ISA")));
  for (braidDataType_t type : kTypes) {
    for (braidRedOp_t op : kOps) {
      EXPECT_EQ(reducerFor(type, op), reducerForIsa(type, op, *chosen));
    }
    EXPECT_EQ(reducerFor(type, braidAvg), reducerFor(type, braidSum));
    EXPECT_NE(dividerFor(type), nullptr);
  }
  EXPECT_EQ(reducerFor(braidNumTypes, braidSum), nullptr);
  EXPECT_EQ(reducerFor(braidFloat32, braidNumOps), nullptr);
  EXPECT_EQ(reducerFor(static_cast<braidDataType_t>(-1), braidSum), nullptr);
  EXPECT_EQ(reducerFor(braidFloat32, static_cast<braidRedOp_t>(-1)), nullptr);
  EXPECT_EQ(dividerFor(braidNumTypes), nullptr);
}

TEST(ReduceDispatch, EnvironmentCapsTheChoice) {
  EXPECT_TRUE(reduceIsaAvailable(ReduceIsa::kPortable));
  EXPECT_EQ(chooseReduceIsa("portable"), ReduceIsa::kPortable);
  const ReduceIsa widest = chooseReduceIsa(nullptr);
  EXPECT_EQ(chooseReduceIsa(""), widest);
  EXPECT_EQ(chooseReduceIsa("avx512"), widest);
  EXPECT_EQ(chooseReduceIsa("not-an-isa"), widest);  // ignored, with a warning
  EXPECT_EQ(chooseReduceIsa("avx2"),
            reduceIsaAvailable(ReduceIsa::kAvx2) ? ReduceIsa::kAvx2 : ReduceIsa::kPortable);
  for (ReduceIsa isa : kAllIsas) {
    EXPECT_EQ(parseReduceIsa(reduceIsaName(isa)), isa);
    if (reduceIsaAvailable(isa)) {
      EXPECT_GE(widest, isa);
    }
  }
  EXPECT_EQ(parseReduceIsa("AVX2"), std::nullopt);
  EXPECT_EQ(parseReduceIsa(nullptr), std::nullopt);
}

}  // namespace
}  // namespace braid::coll
