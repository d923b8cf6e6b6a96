// The engine runs queued ops to completion: one call, or one whole group.
//
// Ops are grouped by communicator. On one communicator all sends/recvs of
// the call run first, together as one batch (so pairs inside a group never
// deadlock), then the collectives one at a time in call order; different
// communicators progress side by side as one task (comm/task.h) of the one
// wait loop (comm/poll_until_done.h; braidCommInitAll driven from one thread).
// The deadline (BRAID_TIMEOUT) counts from the last progress, so a long but
// moving collective never times out and a stuck one always does.
//
// A single blocking collective outside a group does not come here: it runs on
// the direct path (comm/direct_collective.h), which shares the loop and the
// failure handling (comm/call_failure.h). Sends and receives alone on one
// communicator, grouped or not, come here but run as a cheaper task of their
// own (comm/direct_p2p.h): it posts the same messages as the engine, so either
// side of a pair may run either.
#pragma once

#include <span>
#include <vector>

#include "comm/op.h"
#include "core/status.h"

namespace braid {

/// Runs `ops` (validated) to completion: sends and receives alone on one
/// communicator as its point-to-point task where DirectPointToPoint::supports()
/// admits them, everything else as the engine's group task. On failure every
/// communicator involved is marked failed and its peers are told.
Status runOps(std::span<const Op> ops);

}  // namespace braid
