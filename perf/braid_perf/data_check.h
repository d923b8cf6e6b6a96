// Input patterns and result checking for braid-perf's -c 1.
//
// Every input element is a small integer chosen from (sender rank, position),
// so that every result is exactly representable in every type (fp16 and bf16
// included) whatever order the library reduces in; the expected output is then
// recomputed here from the same formula, independently of the library:
//
//   copies (broadcast, gathers, scatters, alltoall, sendrecv): values 1..97
//     (-48..48 for signed types) that differ between neighbouring ranks and
//     positions, so misplaced blocks are caught;
//   sum:  values in [0, m), m chosen so n*(m-1) stays exact in the type;
//   prod: 1s with a few 2s, at most 15 per position (2^15 fits fp16);
//   max/min: values in [-30, 30] (unsigned: [0, 60]);
//   avg:  every rank but the last contributes c in [0, t]; the last adds
//         n*t - sum(c), so the sum is n*t and the average the integer t.
//
// Integer types wrap modulo 2^bits, and the expected values wrap the same way.
#pragma once

#include <cstddef>
#include <cstdint>

#include "braid.h"
#include "collective.h"

namespace braid::perf {

/// One measurement's parameters, as the checker needs them.
struct CheckSpec {
  CollectiveKind kind;
  braidDataType_t type;
  braidRedOp_t op;
  int root;
  int rank;
  int nranks;
  BufferLayout layout;
};

/// Fills the receive buffer's `recvCount` elements with a value no check
/// expects, so that output the library never wrote is counted wrong.
void poisonOutput(const CheckSpec& spec, void* recv);

/// Writes this rank's `sendCount` input elements to `send`.
void fillInput(const CheckSpec& spec, void* send);

/// Counts elements of `recv` that differ from the expected result. Ranks
/// whose output is undefined (non-roots of reduce and gather) count 0.
int64_t countWrong(const CheckSpec& spec, const void* recv);

/// The BRAID_PERF_CORRUPT test hook: flips the lowest bit of this rank's first
/// output element, which changes its value in every type, so that countWrong
/// must find exactly one more wrong element. Does nothing on a rank with no
/// checked output (non-roots of reduce and gather) or an empty output.
void corruptOneElement(const CheckSpec& spec, void* recv);

}  // namespace braid::perf
