// Plans for one collective call of a device group, built for every rank at once.
//
// Both ends of a FIFO must agree on the protocol and on the channel count (a channel is a
// thread block with its own FIFOs), so those are chosen from every rank's plan, never from
// one rank's view: the channel split is used only if every rank's plan allows it; the
// algorithm and the protocol come from selection (collectives/select.h), which reads only
// what all ranks share. Ranks in other processes build the same plans from the
// same arguments (plans are deterministic), so each process uploads only its own ranks'.
// Plain C++ (host planning); the CPU tests run it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "collectives/device/launch.h"
#include "collectives/device/plan_builder.h"
#include "collectives/schedule.h"
#include "collectives/select.h"
#include "core/status.h"

namespace braid::device {

struct GroupPlans {
  std::vector<DevicePlan> ranks;     // indexed by rank
  std::vector<size_t> scratchBytes;  // per rank
  int channels = 1;
  Protocol protocol = Protocol::kSimple;
};

/// `args` with any rank (each rank's plan is built with its own); `channels` is the count
/// used when every plan splits; algorithm and protocol as selected under `overrides`
/// (BRAID_ALGO / BRAID_PROTO).
Result<GroupPlans> planGroupCall(const coll::CollArgs& args, int channels,
                                 const coll::Overrides& overrides);

/// Everything the plans of a call depend on (not the rank), as a cache key.
std::string groupCallKey(const coll::CollArgs& args);

}  // namespace braid::device
