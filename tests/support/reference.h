// The float64 reference that collective tests compare against.
//
// Integers are reduced exactly, with the wraparound of their own width (avg:
// the exact sum, truncated toward zero after one division). Floating types are
// reduced in double and compared with a tolerance that covers pairwise
// reduction in the element type: fp16/bf16 widened to fp32 and rounded once per
// hop, avg = sum then one division. max/min are exact for every type.
//
// Only braid.h and the standard library are used, so the multi-process test
// program (an "outside" user of the public API) shares this code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "braid.h"
#include "support/element_bits.h"
#include "support/input_pattern.h"

namespace braid::testing {

/// The reference value of one reduced element, with the slack a correct
/// implementation may use.
struct Expected {
  bool exact = true;     // integers, min, max: compare raw bits
  uint64_t raw = 0;      // exact expected bits (when exact)
  double value = 0;      // expected value (when !exact)
  double tolerance = 0;  // allowed |got - value| (when !exact)
};

/// Reduces contributions[0..nranks) with `op` as the library must.
Expected reduceReference(braidDataType_t type, braidRedOp_t op, int nranks,
                         const uint64_t* contributions);
/// True when `got` is acceptable for `expected`.
bool matches(braidDataType_t type, const Expected& expected, uint64_t got);

/// Whether the checks below visit element `index` of a `count`-element output:
/// every element up to kDenseCheckCount; beyond, the first and last
/// kDenseCheckCount / 2 and every 5th in between (5 is odd, so over a large
/// output every offset within a power-of-two chunk gets visited).
constexpr size_t kDenseCheckCount = 1 << 15;
inline bool isChecked(size_t index, size_t count) {
  return count <= kDenseCheckCount || index < kDenseCheckCount / 2 ||
         index >= count - kDenseCheckCount / 2 || index % 5 == 0;
}

/// Checks got[i] == reduce over ranks r < nranks of source(r, sourceFirst + i),
/// for i < count. Returns "" when all match, else a description of the first
/// mismatches (index, got, expected) and how many there were.
std::string checkReduced(braidDataType_t type, braidRedOp_t op, int nranks, const void* got,
                         size_t count, const ElementSource& source, size_t sourceFirst);

/// Checks got[i] == source(sourceRank, sourceFirst + i) bit for bit, i < count.
/// Both checks visit the elements isChecked() selects.
std::string checkCopied(braidDataType_t type, const void* got, size_t count,
                        const ElementSource& source, int sourceRank, size_t sourceFirst);

}  // namespace braid::testing
