// Element types and reduction operators for the device executor, as scalar code that compiles
// for host and device alike (see portability.h).
//
// Semantics are the host executor's (collectives/host/reduce_*.h), so both executors give
// bit-identical results: fp16 and bf16 widen to fp32, combine, and round once to nearest
// even; a NaN result keeps its sign and top payload bits and comes out quiet; fp8 narrows
// as core/fp8.h says (nearest even, saturating, NaN as 0x7f); max/min return
// the NaN when either operand is one; integer sum and prod wrap (computed on the unsigned
// twin); avg reduces as sum and the executor divides once at the end (floats: one IEEE
// division; integers: 64-bit division truncating toward zero).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "braid.h"
#include "collectives/device/portability.h"
#include "core/fp8.h"

#if defined(__CUDACC__)
#include <cuda_fp8.h>
#endif

namespace braid::device {

/// Storage types for the 16-bit floats: distinct types, so templates can tell them apart.
struct Half {
  uint16_t bits;
};
struct Bf16 {
  uint16_t bits;
};
/// Storage types for the fp8 floats: one byte each, laid out as CUDA's __nv_fp8_e4m3 and
/// __nv_fp8_e5m2 (cuda_fp8.h), so device buffers of those types are read as they are.
struct Fp8E4m3 {
  uint8_t bits;
};
struct Fp8E5m2 {
  uint8_t bits;
};
#if defined(__CUDACC__)
static_assert(sizeof(Fp8E4m3) == sizeof(__nv_fp8_e4m3) && sizeof(Fp8E5m2) == sizeof(__nv_fp8_e5m2));
#endif

template <class To, class From>
BRAID_HD To bitCast(From from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  memcpy(&to, &from, sizeof(To));
  return to;
}

BRAID_HD float halfToFloat(Half h) {
  const uint32_t sign = uint32_t(h.bits & 0x8000u) << 16;
  const uint32_t magnitude = h.bits & 0x7fffu;
  uint32_t wide;
  if (magnitude < 0x0400u) {  // zero or subnormal: magnitude * 2^-24, exact in fp32
    wide = bitCast<uint32_t>(float(magnitude) * 0x1p-24f);
  } else if (magnitude >= 0x7c00u) {  // Inf or NaN; narrowing quiets NaNs
    wide = (magnitude << 13) | 0x7f800000u;
  } else {
    wide = (magnitude << 13) + ((127u - 15u) << 23);
  }
  return bitCast<float>(wide | sign);
}

BRAID_HD Half floatToHalf(float f) {
  const uint32_t bits = bitCast<uint32_t>(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7fffffffu;
  uint32_t half;
  if (magnitude > 0x7f800000u) {
    half = ((magnitude >> 13) & 0x3ffu) | 0x7e00u;  // NaN: quiet, top payload bits kept
  } else if (magnitude >= 0x477ff000u) {
    half = 0x7c00u;  // at or above 65520 (halfway past 65504): ties to even, i.e. Inf
  } else if (magnitude >= 0x38800000u) {  // normal fp16: drop 13 bits, ties to even
    half = (magnitude - ((127u - 15u) << 23) + 0xfffu + ((magnitude >> 13) & 1u)) >> 13;
  } else {
    // Below 2^-14 the quantum is 2^-24, the ulp of fp32 values in [0.5, 1): adding 0.5
    // lets the FPU round to it (nearest even); the low bits are the fp16 mantissa.
    half = bitCast<uint32_t>(bitCast<float>(magnitude) + 0.5f) - 0x3f000000u;
  }
  return Half{uint16_t(half | sign)};
}

BRAID_HD float bf16ToFloat(Bf16 b) { return bitCast<float>(uint32_t(b.bits) << 16); }

BRAID_HD Bf16 floatToBf16(float f) {
  const uint32_t bits = bitCast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return Bf16{uint16_t((bits | 0x00400000u) >> 16)};
  return Bf16{uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16)};
}

/// How an element is computed on: Compute is the arithmetic type (fp32 for the 16-bit
/// floats, the unsigned twin for integer sum/prod is chosen by the operators).
template <class T>
struct Element {
  using Compute = T;
  BRAID_HD static Compute widen(T x) { return x; }
  BRAID_HD static T narrow(Compute x) { return x; }
};
template <>
struct Element<Half> {
  using Compute = float;
  BRAID_HD static float widen(Half x) { return halfToFloat(x); }
  BRAID_HD static Half narrow(float x) { return floatToHalf(x); }
};
template <>
struct Element<Bf16> {
  using Compute = float;
  BRAID_HD static float widen(Bf16 x) { return bf16ToFloat(x); }
  BRAID_HD static Bf16 narrow(float x) { return floatToBf16(x); }
};

/// fp8: widening is exact everywhere; narrowing uses the hardware conversion on GPUs that
/// have one (sm_89+, cvt.rn.satfinite, what NCCL's fp8 reductions use), whose results are
/// those of floatToFp8 (nearest even, saturating, NaN as 0x7f), and floatToFp8 elsewhere.
template <class Storage, class Format>
struct Fp8Element {
  using Compute = float;
  BRAID_HD static float widen(Storage x) { return fp8ToFloat<Format>(x.bits); }
  BRAID_HD static Storage narrow(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    return Storage{uint8_t(__nv_cvt_float_to_fp8(
        x, __NV_SATFINITE, Format::kMantissaBits == 3 ? __NV_E4M3 : __NV_E5M2))};
#else
    return Storage{floatToFp8<Format>(x)};
#endif
  }
};
template <>
struct Element<Fp8E4m3> : Fp8Element<Fp8E4m3, Fp8E4m3Format> {};
template <>
struct Element<Fp8E5m2> : Fp8Element<Fp8E5m2, Fp8E5m2Format> {};

// The operators, on a Compute value pair. Integer sum/prod go through the unsigned twin:
// the bits are those of two's-complement wraparound, without signed-overflow UB.
template <class C, bool = std::is_integral_v<C>>
struct WrappingOf {
  using type = C;
};
template <class C>
struct WrappingOf<C, true> {
  using type = std::make_unsigned_t<C>;
};
template <class C>
using Wrapping = typename WrappingOf<C>::type;

struct SumOp {
  template <class C>
  BRAID_HD static C apply(C a, C b) {
    return C(Wrapping<C>(a) + Wrapping<C>(b));
  }
};
struct ProdOp {
  template <class C>
  BRAID_HD static C apply(C a, C b) {
    return C(Wrapping<C>(a) * Wrapping<C>(b));
  }
};
struct MaxOp {
  template <class C>
  BRAID_HD static C apply(C a, C b) {
    return (a > b || a != a) ? a : b;  // a != a: a is NaN (never for integers)
  }
};
struct MinOp {
  template <class C>
  BRAID_HD static C apply(C a, C b) {
    return (a < b || a != a) ? a : b;
  }
};

/// a (op) b for one element.
template <class T, class Op>
BRAID_HD T reduceElement(T a, T b) {
  using E = Element<T>;
  return E::narrow(Op::apply(E::widen(a), E::widen(b)));
}

/// Calls f(OpTag{}) with the operator struct for `op` (avg reduces as sum). Dispatching once
/// per slice keeps the op out of the inner loops and out of the kernel's template list.
template <class F>
BRAID_HD void withOp(braidRedOp_t op, F&& f) {
  switch (op) {
    case braidProd:
      f(ProdOp{});
      return;
    case braidMax:
      f(MaxOp{});
      return;
    case braidMin:
      f(MinOp{});
      return;
    default:
      f(SumOp{});
      return;
  }
}

/// x / divisor, rounded once: floats divide in their compute type (fp32 for the 16-bit
/// floats, whose narrowing of the fp32 quotient is still correctly rounded); integers divide
/// in 64 bits, truncating toward zero, so a divisor wider than the element is exact.
template <class T>
BRAID_HD T divideElement(T x, int divisor) {
  using E = Element<T>;
  using C = typename E::Compute;
  if constexpr (std::is_integral_v<C>) {
    using Wide = std::conditional_t<std::is_signed_v<C>, int64_t, uint64_t>;
    return T(Wide(x) / Wide(divisor));
  } else {
    return E::narrow(E::widen(x) / C(divisor));
  }
}

/// Calls f(T{}) with the storage type of `type`; false for an invalid enum.
template <class F>
bool withType(braidDataType_t type, F&& f) {
  switch (type) {
    case braidInt8:
      f(int8_t{});
      return true;
    case braidUint8:
      f(uint8_t{});
      return true;
    case braidInt32:
      f(int32_t{});
      return true;
    case braidUint32:
      f(uint32_t{});
      return true;
    case braidInt64:
      f(int64_t{});
      return true;
    case braidUint64:
      f(uint64_t{});
      return true;
    case braidFloat16:
      f(Half{});
      return true;
    case braidFloat32:
      f(float{});
      return true;
    case braidFloat64:
      f(double{});
      return true;
    case braidBfloat16:
      f(Bf16{});
      return true;
    case braidFloat8e4m3:
      f(Fp8E4m3{});
      return true;
    case braidFloat8e5m2:
      f(Fp8E5m2{});
      return true;
    default:
      return false;
  }
}

}  // namespace braid::device
