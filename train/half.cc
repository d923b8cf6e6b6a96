/*
 * Half-precision conversions (see half.h). Bit-level, no compiler extensions,
 * so the results are the same on every build.
 */
#include "train/half.h"

#include <cstring>

namespace braid::train {

uint16_t floatToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // NaN
  uint32_t roundingBias = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

float bf16ToFloat(uint16_t bits) {
  uint32_t wide = uint32_t{bits} << 16;
  float value;
  std::memcpy(&value, &wide, 4);
  return value;
}

uint16_t floatToFp16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;  // rounds to ≥ 65520: inf
  int exponent = static_cast<int>(magnitude >> 23) - 127 + 15;
  uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;  // with the implicit one
  int shift = exponent >= 1 ? 13 : 13 + 1 - exponent;       // subnormals shift further
  if (shift > 24) return sign;                              // below half the smallest
  uint32_t halfMantissa = mantissa >> shift;
  uint32_t remainder = mantissa & ((1u << shift) - 1);
  uint32_t halfway = 1u << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (halfMantissa & 1u))) ++halfMantissa;
  uint32_t result = exponent >= 1
                        ? ((static_cast<uint32_t>(exponent) << 10) + halfMantissa - 0x400u)
                        : halfMantissa;  // carries into the exponent are correct
  return static_cast<uint16_t>(sign | result);
}

float fp16ToFloat(uint16_t bits) {
  uint32_t sign = uint32_t{bits & 0x8000u} << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t out;
  if (exponent == 0x1f) {
    out = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    out = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    out = sign;
  } else {  // subnormal: normalise
    int e = -1;
    do {
      ++e;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    out = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float value;
  std::memcpy(&value, &out, 4);
  return value;
}

void toHalf(Precision precision, const float* in, size_t count, uint16_t* out) {
  if (precision == Precision::kBf16) {
    for (size_t i = 0; i < count; ++i) out[i] = floatToBf16(in[i]);
  } else {
    for (size_t i = 0; i < count; ++i) out[i] = floatToFp16(in[i]);
  }
}

void fromHalf(Precision precision, const uint16_t* in, size_t count, float* out) {
  if (precision == Precision::kBf16) {
    for (size_t i = 0; i < count; ++i) out[i] = bf16ToFloat(in[i]);
  } else {
    for (size_t i = 0; i < count; ++i) out[i] = fp16ToFloat(in[i]);
  }
}

}  // namespace braid::train
