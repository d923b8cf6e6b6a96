// Codecs for the 16-bit float types: they widen fp16 or bf16 values to fp32 lanes and narrow
// fp32 lanes back, rounding to nearest even, in plain integer vector arithmetic so that any
// ISA (even one without F16C) can use them. The AVX files replace the fp16 codec with the
// hardware conversion (F16C), which gives the same results.
//
// A block of kVectorBytes of 16-bit values is read as 32-bit lanes, each holding two values:
// the low halves widen into one fp32 vector and the high halves into another. Element order
// inside a block does not matter to element-wise kernels as long as narrowing puts every
// value back where it came from, and this split costs a shift or a mask instead of the
// cross-lane shuffles a sequential widening would need.
//
// NaN handling matches x86 hardware (VCVTPS2PH): a NaN keeps its sign and top payload bits
// and comes out quiet, so every NaN a kernel stores is quiet.
//
// Internal linkage on purpose: see reduce_vector.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/kernels/reduce_vector.h"

namespace braid::coll {
namespace {  // NOLINT(build/namespaces): see reduce_vector.h.

// Shared shape of both codecs: kVectorBytes of storage per block, two fp32 vectors of lanes.
template <size_t kVectorBytes>
struct PairedHalfLayout {
  using Storage = uint16_t;
  using Vector = Vec<float, kVectorBytes>;
  using Block = VectorBlock<Vector, 2>;
  static constexpr size_t kElements = kVectorBytes / sizeof(Storage);

  using Bits = Vec<uint32_t, kVectorBytes>;
  using Ints = Vec<int32_t, kVectorBytes>;  // signed compares are cheap on every ISA
};

// bfloat16: the top half of an fp32. Narrowing adds just under half an ulp plus the lowest kept
// bit (ties to even); the carry runs into the exponent, so overflow becomes Inf by itself.
template <size_t kVectorBytes>
struct Bf16Codec : PairedHalfLayout<kVectorBytes> {
  using Layout = PairedHalfLayout<kVectorBytes>;
  using typename Layout::Bits;
  using typename Layout::Block;
  using typename Layout::Ints;
  using typename Layout::Storage;
  using typename Layout::Vector;

  static Block load(const Storage* p) {
    const Bits pair = loadUnaligned<Bits>(p);
    return Block{{bitCast<Vector>(pair << 16), bitCast<Vector>(pair & 0xffff0000u)}};
  }

  static void store(Storage* p, const Block& block) {
    storeUnaligned(p, (narrowToTop(block.v[0]) >> 16) | narrowToTop(block.v[1]));
  }

 private:
  // The bf16 value in the top 16 bits of each lane, zeros below.
  static Bits narrowToTop(Vector v) {
    const Bits bits = bitCast<Bits>(v);
    const Bits rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
    const Bits quietNan = bits | 0x00400000u;
    const Ints isNan = bitCast<Ints>(bits & 0x7fffffffu) > 0x7f800000;
    return (isNan ? quietNan : rounded) & 0xffff0000u;
  }
};

// IEEE binary16 (1 sign, 5 exponent, 10 mantissa bits) without F16C.
template <size_t kVectorBytes>
struct SoftFp16Codec : PairedHalfLayout<kVectorBytes> {
  using Layout = PairedHalfLayout<kVectorBytes>;
  using typename Layout::Bits;
  using typename Layout::Block;
  using typename Layout::Ints;
  using typename Layout::Storage;
  using typename Layout::Vector;

  static Block load(const Storage* p) {
    const Bits pair = loadUnaligned<Bits>(p);
    return Block{{widen(pair & 0xffffu), widen(pair >> 16)}};
  }

  static void store(Storage* p, const Block& block) {
    storeUnaligned(p, narrow(block.v[0]) | (narrow(block.v[1]) << 16));
  }

 private:
  static constexpr int32_t kRebias = (127 - 15) << 23;  // fp32 minus fp16 exponent bias
  static constexpr int32_t kHalfInf = 0x7c00;
  static constexpr int32_t kHalfMinNormal = 0x0400;

  // `half` holds one fp16 in the low 16 bits of each lane.
  static Vector widen(Bits half) {
    const Ints sign = bitCast<Ints>((half & 0x8000u) << 16);
    const Ints magnitude = bitCast<Ints>(half & 0x7fffu);
    const Ints normal = (magnitude << 13) + kRebias;
    // A subnormal is mantissa * 2^-24: exact, and a normal fp32, so DAZ cannot flush it.
    const Ints subnormal = bitCast<Ints>(__builtin_convertvector(magnitude, Vector) * 0x1p-24f);
    // NaNs keep their payload and may stay signalling here: narrow() quiets every NaN.
    const Ints infOrNan = (magnitude << 13) | 0x7f800000;
    const Ints wide = magnitude < kHalfMinNormal ? subnormal
                      : magnitude >= kHalfInf    ? infOrNan
                                                 : normal;
    return bitCast<Vector>(wide | sign);
  }

  // The fp16 in the low 16 bits of each lane, zeros above.
  static Bits narrow(Vector v) {
    const Ints bits = bitCast<Ints>(v);
    const Ints sign = (bits >> 16) & 0x8000;  // arithmetic shift; the mask keeps one bit
    const Ints magnitude = bits & 0x7fffffff;
    // Normal fp16 range: drop 13 mantissa bits with ties to even; a carry bumps the exponent.
    const Ints normal = (magnitude - kRebias + 0xfff + ((magnitude >> 13) & 1)) >> 13;
    // Below 2^-14 the fp16 quantum is 2^-24, the ulp of fp32 values in [0.5, 1): adding 0.5
    // makes the FPU round to it (nearest even), and the low bits are the fp16 mantissa.
    // Rounding up to 2^-14 yields 0x400, the smallest normal, as it should. (This assumes the
    // default rounding mode, as the rest of the library does.)
    const Ints subnormal = bitCast<Ints>(bitCast<Vector>(magnitude) + 0.5f) - 0x3f000000;
    const Ints nan = ((magnitude >> 13) & 0x3ff) | 0x7e00;
    const Ints infOrNan = magnitude > 0x7f800000 ? nan : Ints{} + kHalfInf;
    // 0x38800000 is 2^-14; 0x477ff000 is 65520, halfway above the largest fp16 (65504),
    // which ties to even, i.e. up to Inf.
    const Ints half = magnitude < 0x38800000   ? subnormal
                      : magnitude < 0x477ff000 ? normal
                                               : infOrNan;
    return bitCast<Bits>(half | sign);
  }
};

}  // namespace
}  // namespace braid::coll
