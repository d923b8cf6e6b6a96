// The executor's per-step bookkeeping (executor.h), one copy per group — in a CUDA block's
// shared memory, in a host test's shared object — never one per thread.
//
// Why: a per-thread copy of this table (about 6 KB) made every thread of the kernel carry a
// 6 KB stack frame, and the driver reserves local memory for every thread the GPU can hold
// (~1.6 GB on an H100). With one copy per group the kernel needs no stack at all.
//
// Ownership protocol (what makes one copy safe for many threads): only the group's leader
// writes the table, and only between two barriers that every thread crosses — after all
// threads have finished reading what it replaces, and before any reads the new values. So
// every thread of a group reads the same values at the same point and takes the same
// branches, as a per-thread copy guaranteed by construction.
#pragma once

#include <cstdint>

#include "collectives/device/plan.h"
#include "collectives/device/portability.h"

namespace braid::device {

/// Per-op progress within a step. A fused op has two parts: `taken` counts bytes received
/// (or copied) into dst, `given` bytes sent on; given <= taken, and while the send part must
/// wait (an earlier send of the step to the same peer), the receive part runs alone and the
/// send catches up from dst later. Plain ops use `taken` only.
struct OpProgress {
  uint64_t taken;
  uint64_t given;
  bool takeDone;  // nothing more to receive/copy/compute
  bool giveDone;  // nothing more to send
};

/// The ops the group works on in the current step: entries [0, base) are send parts that the
/// previous step left unfinished (they finish first), [base, count) the step's own ops.
/// Trivially constructible, so that a kernel can declare it __shared__.
struct StepTable {
  const PlanOp* ops[2 * kMaxStepOps];
  OpProgress progress[2 * kMaxStepOps];
  int base;
  int count;
};

/// Leader only: keeps the entries of the finished step whose send part is still open
/// (in order, moved to the front), then appends the `stepCount` ops of the next step with
/// their starting progress (from `initial`, a callable PlanOp -> OpProgress).
template <class Initial>
BRAID_HD void advanceStep(StepTable& t, const PlanOp* stepOps, int stepCount,
                          const Initial& initial) {
  int kept = 0;
  for (int i = t.base; i < t.count; ++i) {  // only the step's own ops may carry over
    if (t.progress[i].giveDone) continue;
    t.ops[kept] = t.ops[i];  // kept <= i - base: in-place compaction is safe
    t.progress[kept++] = t.progress[i];
  }
  t.base = kept;
  t.count = kept + stepCount;
  for (int j = 0; j < stepCount; ++j) {
    t.ops[kept + j] = &stepOps[j];
    t.progress[kept + j] = initial(stepOps[j]);
  }
}

}  // namespace braid::device
