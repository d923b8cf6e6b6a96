#include "support/element_bits.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace braid::testing {
namespace {

// Encodes `value` in a binary float with `mantBits` stored mantissa bits and
// `expBits` exponent bits, rounding once to nearest even (subnormals included).
uint32_t encodeSmallFloat(double value, int mantBits, int expBits) {
  const uint32_t expAllOnes = (1u << expBits) - 1;
  const uint32_t sign = std::signbit(value) ? 1u << (mantBits + expBits) : 0;
  if (std::isnan(value)) return (expAllOnes << mantBits) | (1u << (mantBits - 1));
  double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return sign | (expAllOnes << mantBits);
  if (magnitude == 0) return sign;
  const int bias = (1 << (expBits - 1)) - 1;
  const int minNormalExponent = 1 - bias;
  int binaryExponent;
  std::frexp(magnitude, &binaryExponent);
  int exponent = std::max(binaryExponent - 1, minNormalExponent);
  // Scaling by a power of two is exact, so nearbyint is the only rounding.
  double significand = std::nearbyint(std::ldexp(magnitude, mantBits - exponent));
  const double implicitOne = std::ldexp(1.0, mantBits);
  if (significand >= 2 * implicitOne) {  // rounded up to the next binade
    significand /= 2;
    ++exponent;
  }
  if (significand < implicitOne) return sign | static_cast<uint32_t>(significand);  // subnormal
  int biased = exponent + bias;
  if (biased >= static_cast<int>(expAllOnes)) return sign | (expAllOnes << mantBits);
  return sign | (static_cast<uint32_t>(biased) << mantBits) |
         static_cast<uint32_t>(significand - implicitOne);
}

}  // namespace

uint64_t widthMask(braidDataType_t type) {
  size_t bytes = elementBytes(type);
  return bytes >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * bytes)) - 1;
}

// Two's-complement reinterpretation of a raw signed element.
int64_t signExtend(braidDataType_t type, uint64_t raw) {
  size_t bits = 8 * elementBytes(type);
  if (bits >= 64) return static_cast<int64_t>(raw);
  uint64_t signBit = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((raw ^ signBit) - signBit);
}

size_t elementBytes(braidDataType_t type) {
  switch (type) {
    case braidInt8:
    case braidUint8:
    case braidFloat8e4m3:
    case braidFloat8e5m2:
      return 1;
    case braidFloat16:
    case braidBfloat16:
      return 2;
    case braidInt32:
    case braidUint32:
    case braidFloat32:
      return 4;
    case braidInt64:
    case braidUint64:
    case braidFloat64:
      return 8;
    default:
      return 0;
  }
}

const char* typeLabel(braidDataType_t type) {
  static const char* const kNames[] = {"int8",    "uint8",    "int32",      "uint32",
                                       "int64",   "uint64",   "float16",    "float32",
                                       "float64", "bfloat16", "float8e4m3", "float8e5m2"};
  int index = static_cast<int>(type);
  return index >= 0 && index < braidNumTypes ? kNames[index] : "invalid-type";
}

const char* opLabel(braidRedOp_t op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "avg"};
  int index = static_cast<int>(op);
  return index >= 0 && index < braidNumOps ? kNames[index] : "invalid-op";
}

bool isFloating(braidDataType_t type) {
  return type == braidFloat16 || type == braidBfloat16 || type == braidFloat32 ||
         type == braidFloat64 || isFp8(type);
}

bool isFp8(braidDataType_t type) { return type == braidFloat8e4m3 || type == braidFloat8e5m2; }

double fp8ToDouble(braidDataType_t type, uint8_t bits) {
  const bool e4m3 = type == braidFloat8e4m3;
  const int mantissaBits = e4m3 ? 3 : 2;
  const int exponentMax = e4m3 ? 15 : 31;
  const int bias = e4m3 ? 7 : 15;
  const double sign = (bits & 0x80) ? -1.0 : 1.0;
  const int exponent = (bits & 0x7f) >> mantissaBits;
  const int mantissa = bits & ((1 << mantissaBits) - 1);
  if (e4m3 && (bits & 0x7f) == 0x7f) return NAN;  // e4m3 has no infinities
  if (!e4m3 && exponent == exponentMax) return mantissa ? NAN : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, 1 - bias - mantissaBits);
  return sign * std::ldexp((1 << mantissaBits) + mantissa, exponent - bias - mantissaBits);
}

uint8_t doubleToFp8(braidDataType_t type, double value) {
  // Few codes: search them all for the nearest (ties to an even mantissa), saturating.
  if (std::isnan(value)) return 0x7f;
  if (std::isinf(value)) value = std::copysign(1e6, value);  // saturates like any overflow
  int best = -1;
  double bestError = 0;
  for (int code = 0; code < 256; ++code) {
    const double v = fp8ToDouble(type, static_cast<uint8_t>(code));
    if (!std::isfinite(v)) continue;
    if (v == 0 && ((code & 0x80) != 0) != std::signbit(value)) continue;
    const double error = std::fabs(v - value);
    if (best < 0 || error < bestError || (error == bestError && (code & 1) == 0)) {
      best = code;
      bestError = error;
    }
  }
  return static_cast<uint8_t>(best);
}

bool isSigned(braidDataType_t type) {
  return type == braidInt8 || type == braidInt32 || type == braidInt64;
}

double halfToDouble(uint16_t bits) {
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  int exponent = (bits >> 10) & 0x1F;
  int mantissa = bits & 0x3FF;
  if (exponent == 0x1F) return mantissa ? NAN : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

double bfloat16ToDouble(uint16_t bits) {
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  int exponent = (bits >> 7) & 0xFF;
  int mantissa = bits & 0x7F;
  if (exponent == 0xFF) return mantissa ? NAN : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, -133);
  return sign * std::ldexp(128 + mantissa, exponent - 134);
}

uint16_t doubleToHalf(double value) {
  return static_cast<uint16_t>(encodeSmallFloat(value, 10, 5));
}

uint16_t doubleToBfloat16(double value) {
  return static_cast<uint16_t>(encodeSmallFloat(value, 7, 8));
}

namespace {

// Fixed-size copies compile to single moves; this runs for every checked element.
template <typename T>
uint64_t loadAs(const void* buffer, size_t index) {
  T value;
  std::memcpy(&value, static_cast<const char*>(buffer) + index * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void storeAs(void* buffer, size_t index, uint64_t raw) {
  T value = static_cast<T>(raw);
  std::memcpy(static_cast<char*>(buffer) + index * sizeof(T), &value, sizeof(T));
}

}  // namespace

uint64_t loadRaw(braidDataType_t type, const void* buffer, size_t index) {
  switch (elementBytes(type)) {
    case 1:
      return loadAs<uint8_t>(buffer, index);
    case 2:
      return loadAs<uint16_t>(buffer, index);
    case 4:
      return loadAs<uint32_t>(buffer, index);
    default:
      return loadAs<uint64_t>(buffer, index);
  }
}

void storeRaw(braidDataType_t type, void* buffer, size_t index, uint64_t raw) {
  switch (elementBytes(type)) {
    case 1:
      storeAs<uint8_t>(buffer, index, raw);
      break;
    case 2:
      storeAs<uint16_t>(buffer, index, raw);
      break;
    case 4:
      storeAs<uint32_t>(buffer, index, raw);
      break;
    default:
      storeAs<uint64_t>(buffer, index, raw);
      break;
  }
}

namespace {

// Every 16-bit pattern decoded once: the checks decode millions of elements.
struct SixteenBitTables {
  std::vector<double> half, bfloat16;
  SixteenBitTables() : half(1 << 16), bfloat16(1 << 16) {
    for (uint32_t bits = 0; bits < (1u << 16); ++bits) {
      half[bits] = halfToDouble(static_cast<uint16_t>(bits));
      bfloat16[bits] = bfloat16ToDouble(static_cast<uint16_t>(bits));
    }
  }
};

const SixteenBitTables& sixteenBitTables() {
  static const SixteenBitTables tables;
  return tables;
}

}  // namespace

double rawToDouble(braidDataType_t type, uint64_t raw) {
  switch (type) {
    case braidFloat8e4m3:
    case braidFloat8e5m2:
      return fp8ToDouble(type, static_cast<uint8_t>(raw));
    case braidFloat16:
      return sixteenBitTables().half[raw & 0xFFFF];
    case braidBfloat16:
      return sixteenBitTables().bfloat16[raw & 0xFFFF];
    case braidFloat32: {
      float f;
      uint32_t bits = static_cast<uint32_t>(raw);
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case braidFloat64: {
      double d;
      std::memcpy(&d, &raw, 8);
      return d;
    }
    default:
      return isSigned(type) ? static_cast<double>(signExtend(type, raw))
                            : static_cast<double>(raw & widthMask(type));
  }
}

uint64_t doubleToRaw(braidDataType_t type, double value) {
  switch (type) {
    case braidFloat8e4m3:
    case braidFloat8e5m2:
      return doubleToFp8(type, value);
    case braidFloat16:
      return doubleToHalf(value);
    case braidBfloat16:
      return doubleToBfloat16(value);
    case braidFloat32: {
      float f = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      return bits;
    }
    case braidFloat64: {
      uint64_t bits;
      std::memcpy(&bits, &value, 8);
      return bits;
    }
    default:
      return static_cast<uint64_t>(static_cast<int64_t>(value)) & widthMask(type);
  }
}

std::string formatRaw(braidDataType_t type, uint64_t raw) {
  char text[64];
  if (isFloating(type)) {
    std::snprintf(text, sizeof text, "%.9g (0x%llx)", rawToDouble(type, raw),
                  static_cast<unsigned long long>(raw));
  } else if (isSigned(type)) {
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(signExtend(type, raw)));
  } else {
    std::snprintf(text, sizeof text, "%llu", static_cast<unsigned long long>(raw));
  }
  return text;
}

}  // namespace braid::testing
