#include "types.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

namespace braid::perf {
namespace {

struct TypeInfo {
  braidDataType_t type;
  const char* name;  // nccl-tests' spelling, printed in the table
  size_t size;
};

constexpr std::array<TypeInfo, braidNumTypes> kTypes = {{
    {braidInt8, "int8", 1},
    {braidUint8, "uint8", 1},
    {braidInt32, "int32", 4},
    {braidUint32, "uint32", 4},
    {braidInt64, "int64", 8},
    {braidUint64, "uint64", 8},
    {braidFloat16, "half", 2},
    {braidFloat32, "float", 4},
    {braidFloat64, "double", 8},
    {braidBfloat16, "bfloat16", 2},
    {braidFloat8e4m3, "f8e4m3", 1},
    {braidFloat8e5m2, "f8e5m2", 1},
}};

struct Alias {
  std::string_view name;
  braidDataType_t type;
};

constexpr std::array<Alias, 13> kTypeAliases = {{
    {"fp8e4m3", braidFloat8e4m3},
    {"float8e4m3", braidFloat8e4m3},
    {"fp8e5m2", braidFloat8e5m2},
    {"float8e5m2", braidFloat8e5m2},
    {"char", braidInt8},
    {"int", braidInt32},
    {"fp16", braidFloat16},
    {"float16", braidFloat16},
    {"fp32", braidFloat32},
    {"float32", braidFloat32},
    {"fp64", braidFloat64},
    {"float64", braidFloat64},
    {"bf16", braidBfloat16},
}};

constexpr std::array<const char*, braidNumOps> kOpNames = {"sum", "prod", "max", "min", "avg"};

template <typename T>
void storeAs(void* buffer, size_t index, T value) {
  std::memcpy(static_cast<char*>(buffer) + index * sizeof(T), &value, sizeof(T));
}

template <typename T>
T loadAs(const void* buffer, size_t index) {
  T value;
  std::memcpy(&value, static_cast<const char*>(buffer) + index * sizeof(T), sizeof(T));
  return value;
}

// Integers wrap modulo 2^bits, as two's-complement hardware (and C++20) does.
template <typename T>
T wrapInteger(double value) {
  return static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(value)));
}

}  // namespace

size_t elementSize(braidDataType_t type) { return kTypes[type].size; }

const char* typeName(braidDataType_t type) { return kTypes[type].name; }

std::optional<braidDataType_t> parseType(std::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (name == info.name) return info.type;
  }
  for (const Alias& alias : kTypeAliases) {
    if (name == alias.name) return alias.type;
  }
  return std::nullopt;
}

const char* opName(braidRedOp_t op) { return kOpNames[op]; }

std::optional<braidRedOp_t> parseOp(std::string_view name) {
  for (int op = 0; op < braidNumOps; ++op) {
    if (name == kOpNames[op]) return static_cast<braidRedOp_t>(op);
  }
  return std::nullopt;
}

bool isFloatingPoint(braidDataType_t type) {
  return type == braidFloat16 || type == braidFloat32 || type == braidFloat64 ||
         type == braidBfloat16 || type == braidFloat8e4m3 || type == braidFloat8e5m2;
}

bool isSignedInteger(braidDataType_t type) {
  return type == braidInt8 || type == braidInt32 || type == braidInt64;
}

int64_t exactIntegerLimit(braidDataType_t type) {
  switch (type) {
    case braidInt8:
      return 127;
    case braidUint8:
      return 255;
    case braidInt32:
    case braidUint32:
      return INT32_MAX;
    case braidInt64:
    case braidUint64:
      return int64_t{1} << 53;  // the checker computes in double
    case braidFloat16:
      return 2048;
    case braidBfloat16:
      return 256;
    case braidFloat8e4m3:
      return 16;  // 4 significant bits
    case braidFloat8e5m2:
      return 8;
    case braidFloat32:
      return int64_t{1} << 24;
    case braidFloat64:
      return int64_t{1} << 53;
    default:
      return 0;
  }
}

void storeElement(braidDataType_t type, void* buffer, size_t index, double value) {
  switch (type) {
    case braidInt8:
      storeAs(buffer, index, wrapInteger<int8_t>(value));
      break;
    case braidUint8:
      storeAs(buffer, index, wrapInteger<uint8_t>(value));
      break;
    case braidInt32:
      storeAs(buffer, index, wrapInteger<int32_t>(value));
      break;
    case braidUint32:
      storeAs(buffer, index, wrapInteger<uint32_t>(value));
      break;
    case braidInt64:
      storeAs(buffer, index, wrapInteger<int64_t>(value));
      break;
    case braidUint64:
      storeAs(buffer, index, wrapInteger<uint64_t>(value));
      break;
    case braidFloat16:
      storeAs(buffer, index, floatToHalf(static_cast<float>(value)));
      break;
    case braidFloat32:
      storeAs(buffer, index, static_cast<float>(value));
      break;
    case braidFloat64:
      storeAs(buffer, index, value);
      break;
    case braidBfloat16:
      storeAs(buffer, index, floatToBfloat16(static_cast<float>(value)));
      break;
    case braidFloat8e4m3:
    case braidFloat8e5m2:
      storeAs(buffer, index, floatToFp8(type, static_cast<float>(value)));
      break;
    default:
      break;
  }
}

double loadElement(braidDataType_t type, const void* buffer, size_t index) {
  switch (type) {
    case braidInt8:
      return loadAs<int8_t>(buffer, index);
    case braidUint8:
      return loadAs<uint8_t>(buffer, index);
    case braidInt32:
      return loadAs<int32_t>(buffer, index);
    case braidUint32:
      return loadAs<uint32_t>(buffer, index);
    case braidInt64:
      return static_cast<double>(loadAs<int64_t>(buffer, index));
    case braidUint64:
      return static_cast<double>(loadAs<uint64_t>(buffer, index));
    case braidFloat16:
      return halfToFloat(loadAs<uint16_t>(buffer, index));
    case braidFloat32:
      return loadAs<float>(buffer, index);
    case braidFloat64:
      return loadAs<double>(buffer, index);
    case braidBfloat16:
      return bfloat16ToFloat(loadAs<uint16_t>(buffer, index));
    case braidFloat8e4m3:
    case braidFloat8e5m2:
      return fp8ToFloat(type, loadAs<uint8_t>(buffer, index));
    default:
      return 0.0;
  }
}

// IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
uint16_t floatToHalf(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) {  // inf or NaN (NaN keeps a quiet mantissa bit)
    return sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0u);
  }
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;  // rounds past 65504: inf
  if (magnitude < 0x38800000u) {                        // below 2^-14: subnormal half (or zero)
    // Scaling by 2^24 turns the subnormal's mantissa into an integer; nearbyint
    // rounds it to nearest even under the default rounding mode.
    const float scaled = std::fabs(value) * 16777216.0f;
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  // Normal: rebias the exponent, then round the 13 dropped bits to nearest even
  // (a carry out of the mantissa correctly bumps the exponent).
  const uint32_t rebased = magnitude - (uint32_t{112} << 23);
  const uint32_t lsb = (rebased >> 13) & 1u;
  return sign | static_cast<uint16_t>((rebased + 0xfffu + lsb) >> 13);
}

float halfToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t floatToBfloat16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t lsb = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7fffu + lsb) >> 16);
}

float bfloat16ToFloat(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); }

namespace {
struct Fp8Layout {
  int mantissaBits;
  int bias;
  double maxFinite;
};
Fp8Layout fp8Layout(braidDataType_t type) {
  return type == braidFloat8e4m3 ? Fp8Layout{3, 7, 448.0} : Fp8Layout{2, 15, 57344.0};
}
}  // namespace

// Nearest even, saturating at the largest finite value, NaN as 0x7f (as braid reduces).
uint8_t floatToFp8(braidDataType_t type, float value) {
  const Fp8Layout f = fp8Layout(type);
  if (std::isnan(value)) return 0x7f;
  const uint8_t sign = std::signbit(value) ? 0x80 : 0;
  const double magnitude = std::min<double>(std::fabs(value), f.maxFinite);
  if (magnitude == 0) return sign;
  int exponent;
  std::frexp(magnitude, &exponent);  // magnitude in [2^(exponent-1), 2^exponent)
  exponent = std::max(exponent - 1, 1 - f.bias);
  // Units of the quantum at this exponent; scaling by a power of two is exact.
  const double units = std::nearbyint(std::ldexp(magnitude, f.mantissaBits - exponent));
  // A carry into the next binade is the same code arithmetic: (biased exponent, mantissa)
  // run on as one integer.
  const int code = (exponent + f.bias - 1) * (1 << f.mantissaBits) + static_cast<int>(units);
  return static_cast<uint8_t>(sign | code);
}

float fp8ToFloat(braidDataType_t type, uint8_t bits) {
  const Fp8Layout f = fp8Layout(type);
  const int magnitude = bits & 0x7f;
  const int exponent = magnitude >> f.mantissaBits;
  const int mantissa = magnitude & ((1 << f.mantissaBits) - 1);
  double value;
  if (type == braidFloat8e4m3 && magnitude == 0x7f) return NAN;
  if (type == braidFloat8e5m2 && exponent == 31) {
    value = mantissa != 0 ? NAN : INFINITY;
  } else if (exponent == 0) {
    value = std::ldexp(mantissa, 1 - f.bias - f.mantissaBits);
  } else {
    value = std::ldexp(mantissa + (1 << f.mantissaBits), exponent - f.bias - f.mantissaBits);
  }
  return static_cast<float>((bits & 0x80) ? -value : value);
}

}  // namespace braid::perf
