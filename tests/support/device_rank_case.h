// One rank's side of a collective run on buffers the test cannot read directly (device
// memory, or FIFOs wired like device memory): where the C API's in-place forms put sendbuff
// and recvbuff inside one allocation, which inputs to upload, and the check of the output
// the rank downloads. Inputs come from an InputPattern (a pure function of rank and index),
// so a rank checks its own output without any other rank's memory: forked processes share
// nothing but the seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "collectives/schedule.h"
#include "support/input_pattern.h"

namespace braid::testing {

/// In place, the C API's buffers are views of one allocation of `wholeBytes`:
/// sendbuff = whole + sendOffset, recvbuff = whole + recvOffset (all-gather sends from the
/// rank's block of recvbuff, reduce-scatter receives into the rank's block of sendbuff).
/// Out of place: two allocations, offsets 0.
struct RankBufferLayout {
  size_t sendBytes = 0, recvBytes = 0;
  size_t wholeBytes = 0, sendOffset = 0, recvOffset = 0;
};

/// `a.rank` is the rank whose buffers these are.
RankBufferLayout rankBufferLayout(const coll::CollArgs& a);

/// Values suited to the collective: reduction inputs for reducing ones, arbitrary bit
/// patterns (NaNs included) for data movement.
InputPattern patternFor(const coll::CollArgs& a, uint64_t seed);

/// Rank a.rank's input: layout.sendBytes bytes for sendbuff.
void fillRankInput(const coll::CollArgs& a, const InputPattern& pattern, uint8_t* send);

/// Checks rank a.rank's recvbuff (layout.recvBytes bytes) of all-reduce, reduce-scatter,
/// all-gather, broadcast or all-to-all against the float64 reference; "" when right.
std::string checkRankOutput(const coll::CollArgs& a, const InputPattern& pattern,
                            const uint8_t* recv);

/// "all-reduce float32 sum n=2 count=7 in place" for failure messages.
std::string describeCall(const coll::CollArgs& a);

}  // namespace braid::testing
