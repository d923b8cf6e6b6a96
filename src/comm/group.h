// braidGroupStart / braidGroupEnd: per-thread queues of ops run together. Host ops run at
// the outermost braidGroupEnd; device ops are enqueued on their streams there.
#pragma once

#include <functional>
#include <memory>

#include "comm/op.h"
#include "comm/turns.h"
#include "core/status.h"

namespace braid {

/// Runs `op` now, or queues it when this thread is inside a group.
Status submit(Op op);

/// For device buffers (validated): enqueues `op` on `stream` now (comm/device_path.h), or
/// inside a group at the outermost braidGroupEnd, the group's device ops together.
Status submitOnDevice(Op op, void* stream);

Status groupStart();
/// Inside a group: remembers `error` (the first one counts), so that the outermost
/// groupEnd drops the group's calls and fails with it, as NCCL does. Outside: nothing.
void failGroup(const Status& error);
/// Whether this thread is between braidGroupStart and the outermost braidGroupEnd.
bool inGroup();
/// Queues a pending handle's join (comm/handle_table.h) to run at the outermost groupEnd,
/// with the group's other joins at the same time (so one thread can create communicators
/// whose ranks wait for each other).
Status deferJoin(braidComm_t handle);
/// Queues `task` to run at the outermost groupEnd on a thread of its own, at the same time
/// as the group's joins and other tasks: a rank's part in deriving a communicator it gets
/// no handle of (a split with BRAID_SPLIT_NOCOLOR), whose peers wait for it.
Status deferTask(std::function<Status()> task);
/// The turns (comm/turns.h) of the derivations from `parent` queued in this thread's group:
/// the same object until the outermost groupEnd.
std::shared_ptr<Turns> parentTurns(braidComm_t parent);
/// Ends one nesting level; the outermost end runs everything queued. When a call inside the
/// group failed, nothing runs: the group's pending communicators fail with that error.
Status groupEnd();
/// braidGroupSimulateEnd: sets *estimatedUs to the cost model's estimate for every call
/// queued in this thread's group (collectives/estimate.h), then ends one nesting level as
/// groupEnd does, except that the outermost end drops the queued calls instead of running
/// them (communicator inits in the group still run). A call rejected inside the group
/// fails it as in groupEnd.
Status groupSimulateEnd(double* estimatedUs);

}  // namespace braid
