// The OCP 8-bit floats, one element at a time, for host and device code alike (the SIMD
// kernels have their own codec in core/kernels/reduce_fp8.h; tests hold both to the same
// reference).
//
//   e4m3: 1 sign, 4 exponent (bias 7), 3 mantissa bits. No infinities; S.1111.111 is NaN;
//         the largest finite value is 448, the smallest subnormal 2^-9.
//   e5m2: 1 sign, 5 exponent (bias 15), 2 mantissa bits, IEEE-like: exponent 11111 holds
//         +-Inf (mantissa 0) and NaN; the largest finite value is 57344, the smallest
//         subnormal 2^-16.
//
// Widening to fp32 is exact. Narrowing rounds to nearest even and saturates, which is what
// NCCL's reductions do (CUDA's fp8 constructors convert with __NV_SATFINITE): anything above
// the largest finite value, infinities included, becomes +-max; every NaN becomes 0x7f.
// NCCL computes in fp16 rather than fp32; for one operation on two fp8 values the result is
// the same (fp16 holds every such sum and product closely enough that rounding it again to
// fp8 cannot land differently; every pair of codes was compared).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define BRAID_FP8_HD __host__ __device__ __forceinline__
#else
#define BRAID_FP8_HD inline
#endif

namespace braid {

/// Which fp8 format: the parameters the conversions need.
struct Fp8E4m3Format {
  static constexpr int kMantissaBits = 3;
  static constexpr uint32_t kRebias = (127u - 7u) << 23;  // fp32 minus fp8 exponent bias
  static constexpr uint32_t kMinNormal = 0x3c800000u;     // 2^-6 as fp32 bits
  static constexpr uint32_t kMaxFinite = 0x43e00000u;     // 448
  static constexpr uint8_t kMaxCode = 0x7e;
  static constexpr float kSubnormalQuantum = 0x1p-9f;
  // An fp32 whose ulp is the subnormal quantum: adding it makes the FPU round to that quantum.
  static constexpr float kSubnormalShifter = 0x1p14f;
  static constexpr uint32_t kSubnormalShifterBits = 0x46800000u;
  static constexpr bool kHasInfinity = false;
};
struct Fp8E5m2Format {
  static constexpr int kMantissaBits = 2;
  static constexpr uint32_t kRebias = (127u - 15u) << 23;
  static constexpr uint32_t kMinNormal = 0x38800000u;  // 2^-14
  static constexpr uint32_t kMaxFinite = 0x47600000u;  // 57344
  static constexpr uint8_t kMaxCode = 0x7b;
  static constexpr float kSubnormalQuantum = 0x1p-16f;
  static constexpr float kSubnormalShifter = 0x1p7f;
  static constexpr uint32_t kSubnormalShifterBits = 0x43000000u;
  static constexpr bool kHasInfinity = true;
};

/// The code every NaN result is stored as, in both formats.
inline constexpr uint8_t kFp8CanonicalNan = 0x7f;

namespace fp8_detail {
BRAID_FP8_HD uint32_t floatBits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
BRAID_FP8_HD float bitsFloat(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace fp8_detail

/// The exact fp32 value of fp8 `code`.
template <class Format>
BRAID_FP8_HD float fp8ToFloat(uint8_t code) {
  constexpr int kShift = 23 - Format::kMantissaBits;
  const uint32_t sign = uint32_t(code & 0x80u) << 24;
  const uint32_t magnitude = code & 0x7fu;
  const uint32_t firstNormal = 1u << Format::kMantissaBits;
  const uint32_t firstSpecial = Format::kHasInfinity ? 0x7cu : 0x7fu;
  uint32_t wide;
  if (magnitude < firstNormal) {  // zero or subnormal: exact in fp32
    wide = fp8_detail::floatBits(float(magnitude) * Format::kSubnormalQuantum);
  } else if (magnitude >= firstSpecial) {
    wide = Format::kHasInfinity ? ((magnitude << kShift) | 0x7f800000u) : 0x7fc00000u;
  } else {
    wide = (magnitude << kShift) + Format::kRebias;
  }
  return fp8_detail::bitsFloat(wide | sign);
}

/// `value` rounded to nearest even and saturated (see the file comment).
template <class Format>
BRAID_FP8_HD uint8_t floatToFp8(float value) {
  constexpr int kShift = 23 - Format::kMantissaBits;
  const uint32_t bits = fp8_detail::floatBits(value);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t magnitude = bits & 0x7fffffffu;
  uint32_t code;
  if (magnitude > 0x7f800000u) return kFp8CanonicalNan;
  if (magnitude > Format::kMaxFinite) {
    code = Format::kMaxCode;
  } else if (magnitude >= Format::kMinNormal) {  // drop kShift bits, ties to even
    code = (magnitude - Format::kRebias + ((1u << (kShift - 1)) - 1u) +
            ((magnitude >> kShift) & 1u)) >>
           kShift;
  } else {
    code = fp8_detail::floatBits(fp8_detail::bitsFloat(magnitude) + Format::kSubnormalShifter) -
           Format::kSubnormalShifterBits;
  }
  return uint8_t(code | sign);
}

}  // namespace braid
