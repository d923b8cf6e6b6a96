// SIMD codec for the fp8 types (formats and rounding in core/fp8.h): widens fp8 codes to fp32
// lanes and narrows fp32 lanes back, rounding to nearest even and saturating, in plain
// integer vector arithmetic that every ISA can run, giving the same bits as the scalar
// fp8ToFloat / floatToFp8.
//
// A block of kVectorBytes codes is read as 32-bit lanes of four codes each: byte k of every
// lane widens into fp32 vector k. Element-wise kernels do not care about the order inside a
// block as long as narrowing puts each value back in its byte (same trick as reduce_half.h).
//
// Internal linkage on purpose: see reduce_vector.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/fp8.h"
#include "core/kernels/reduce_vector.h"

namespace braid::coll {
namespace {  // NOLINT(build/namespaces): see reduce_vector.h.

template <size_t kVectorBytes, class Format>
struct Fp8Codec {
  using Storage = uint8_t;
  using Vector = Vec<float, kVectorBytes>;
  using Block = VectorBlock<Vector, 4>;
  static constexpr size_t kElements = kVectorBytes;

  using Bits = Vec<uint32_t, kVectorBytes>;
  using Ints = Vec<int32_t, kVectorBytes>;  // signed compares are cheap on every ISA

  static Block load(const Storage* p) {
    const Bits quad = loadUnaligned<Bits>(p);
    return Block{{widen(quad & 0xffu), widen((quad >> 8) & 0xffu), widen((quad >> 16) & 0xffu),
                  widen(quad >> 24)}};
  }

  static void store(Storage* p, const Block& block) {
    storeUnaligned(p, narrow(block.v[0]) | (narrow(block.v[1]) << 8) | (narrow(block.v[2]) << 16) |
                          (narrow(block.v[3]) << 24));
  }

 private:
  static constexpr int kShift = 23 - Format::kMantissaBits;
  static constexpr int32_t kFirstNormal = 1 << Format::kMantissaBits;
  static constexpr int32_t kFirstSpecial = Format::kHasInfinity ? 0x7c : 0x7f;

  // `code` holds one fp8 code in the low 8 bits of each lane.
  static Vector widen(Bits code) {
    const Ints sign = bitCast<Ints>((code & 0x80u) << 24);
    const Ints magnitude = bitCast<Ints>(code & 0x7fu);
    const Ints normal = (magnitude << kShift) + int32_t(Format::kRebias);
    const Ints subnormal =
        bitCast<Ints>(__builtin_convertvector(magnitude, Vector) * Format::kSubnormalQuantum);
    const Ints special =
        Format::kHasInfinity ? ((magnitude << kShift) | 0x7f800000) : Ints{} + 0x7fc00000;
    const Ints wide = magnitude < kFirstNormal     ? subnormal
                      : magnitude >= kFirstSpecial ? special
                                                   : normal;
    return bitCast<Vector>(wide | sign);
  }

  // The fp8 code in the low 8 bits of each lane, zeros above.
  static Bits narrow(Vector v) {
    const Ints bits = bitCast<Ints>(v);
    const Ints sign = (bits >> 24) & 0x80;  // arithmetic shift; the mask keeps one bit
    const Ints magnitude = bits & 0x7fffffff;
    const Ints normal = (magnitude - int32_t(Format::kRebias) + ((1 << (kShift - 1)) - 1) +
                         ((magnitude >> kShift) & 1)) >>
                        kShift;
    const Ints subnormal = bitCast<Ints>(bitCast<Vector>(magnitude) + Format::kSubnormalShifter) -
                           int32_t(Format::kSubnormalShifterBits);
    const Ints finite = magnitude < int32_t(Format::kMinNormal)    ? subnormal
                        : magnitude <= int32_t(Format::kMaxFinite) ? normal
                                                                   : Ints{} + Format::kMaxCode;
    const Ints code = magnitude > 0x7f800000 ? Ints{} + kFp8CanonicalNan : (finite | sign);
    return bitCast<Bits>(code);
  }
};

}  // namespace
}  // namespace braid::coll
