// The direct path: one blocking collective called outside a group, run on the
// calling thread without the group engine's queues.
//
// A training loop's small collectives are dominated by host overhead, not by
// bytes: the engine groups ops by communicator, allocates a stage, a runner
// and their vectors per call, and walks lists built for groups. Here one
// collective gets its task from the communicator's schedule cache, bound to
// its buffers and ready to post (comm/schedule_cache.h), and runs it alone
// (comm/run_task.h): after the first call of a shape, no allocation and no
// clock read while the peers keep up. Waiting, failure reporting
// (call_failure.h) and the flight recorder are those of every task.
//
// Calls the direct path does not take go to the engine unchanged: BRAID_CHECK
// (its signature exchange is a stage of its own) and AllToAllv (never cached).
// Where selection picked the exchange for a tiny all-reduce or barrier, the
// task runs it without a runner (comm/exchange_task.h).
#pragma once

#include "comm/op.h"
#include "core/status.h"

namespace braid {

/// Runs the collective `op` to completion. The caller has validated it and
/// found its communicator healthy just before (as the C API does). On failure
/// the communicator is marked failed and its peers are told, as runOps does.
Status runCollectiveDirect(const Op& op);

}  // namespace braid
