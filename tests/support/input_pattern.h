// Deterministic test inputs: element `index` of `rank` is a pure function of
// (seed, rank, index), so any rank (thread or process) can recompute any other
// rank's input without seeing its memory.
//
// Values are chosen so that a wrong answer cannot hide inside the reference's
// tolerance: every summand has magnitude >= 1 while the tolerance stays far
// below 1; fp16 and bf16 summands are multiples of 1/4 (so partial sums are
// exact) and their factors powers of two; fp32/fp64 factors are full-mantissa
// values in [0.5, 2); integer sums use the full range (wraparound), integer
// factors are small, and avg inputs are small enough never to overflow.
// Because values vary with the index, a block delivered to the wrong place or
// a missing contribution changes the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "support/element_bits.h"

namespace braid::testing {

/// Deterministic inputs for one (type, op): element `index` of `rank` is a pure
/// function of (seed, rank, index), so any rank can recompute any other's input.
class InputPattern {
 public:
  /// What the values are for: a reduction with `op`, or pure data movement
  /// (random bit patterns, NaNs included for floats, compared bit for bit).
  enum class Use { kReduce, kMove };

  InputPattern(braidDataType_t type, braidRedOp_t op, uint64_t seed, Use use = Use::kReduce);
  static InputPattern forMove(braidDataType_t type, uint64_t seed) {
    return InputPattern(type, braidSum, seed, Use::kMove);
  }

  braidDataType_t type() const { return type_; }
  /// Element `index` of `rank`'s input, as raw bits.
  uint64_t raw(int rank, size_t index) const;
  /// Writes `rank`'s elements [first, first + count) to buffer[0, count).
  void fill(int rank, size_t first, size_t count, void* buffer) const;

 private:
  braidDataType_t type_;
  braidRedOp_t op_;
  uint64_t seed_;
  Use use_;
  void setLaneBits(int bits);
  uint64_t hashWord(int rank, size_t word) const;
  uint64_t valueFromBits(uint64_t bits) const;
  template <typename Element>
  void fillAs(int rank, size_t first, size_t count, Element* out) const;

  int laneBits_ = 64;            // random bits each element draws from the hash
  int laneShift_ = 0;            // log2 of the elements that share one hash
  std::vector<uint64_t> table_;  // the values to draw from, for kinds with few of them
};

/// Supplies contributing elements: (rank, index) -> raw bits.
using ElementSource = std::function<uint64_t(int rank, size_t index)>;

/// An ElementSource that reads per-rank input buffers: inputs[rank][index].
ElementSource sourceFromBuffers(braidDataType_t type, const void* const* inputs);
/// An ElementSource backed by a pattern.
ElementSource sourceFromPattern(const InputPattern& pattern);

}  // namespace braid::testing
