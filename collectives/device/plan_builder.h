// Builds a device plan from a Schedule on the host: flattening, bounds checks, fusion of a
// receive with the next step's send of the same bytes, and the check that decides whether
// the plan may be split over several channels (thread blocks).
#pragma once

#include <cstddef>
#include <vector>

#include "collectives/device/plan.h"
#include "collectives/schedule.h"
#include "core/status.h"

namespace braid::device {

struct PlanBufferSizes {
  size_t sendBytes = 0, recvBytes = 0, scratchBytes = 0;
  bool inPlace = false;  // send and recv are the same memory
};

struct DevicePlan {
  std::vector<PlanOp> ops;
  std::vector<uint32_t> stepStarts;
  /// Whether channel c of C may run the element range [c*E/C, (c+1)*E/C) of every op on
  /// its own: true when every read of a region follows only writes of exactly that region,
  /// so no channel reads bytes another channel writes.
  bool splittable = false;
  size_t fusedOps = 0;  // receive + send pairs merged into one op (for tests and logs)
};

/// `fuse`: merge receive/copy + the next step's send of the same span where the merge
/// cannot reorder messages or create a wait cycle (see the .cc). Fails on a schedule that
/// touches bytes outside its buffers, a step with more than kMaxStepOps ops, a partly
/// overlapping local copy, or byte counts that are not whole elements of `elemSize`.
Result<DevicePlan> buildDevicePlan(const coll::Schedule& schedule, const PlanBufferSizes& sizes,
                                   size_t elemSize, bool fuse);

}  // namespace braid::device
