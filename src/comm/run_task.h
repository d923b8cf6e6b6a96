// One task on one communicator from start to end: what every call on a single
// communicator does around the one wait loop (comm/poll_until_done.h), whatever
// its task is (a cached collective's, comm/schedule_cache.h; sends and receives,
// comm/direct_p2p.h). The engine's group task, over several communicators, does
// the same per communicator (comm/engine.cc).
#pragma once

#include <cstddef>

#include "comm/call_failure.h"
#include "comm/comm.h"
#include "comm/core_spreading.h"
#include "comm/poll_until_done.h"
#include "comm/task.h"
#include "core/status.h"

namespace braid {

/// Runs `task` on `comm` to completion: counted in flight (Comm::enter), the thread placed
/// for a call whose largest buffer is `largestBytes`, the end or the progress reached
/// recorded in the flight recorder; on failure the communicator is marked failed and its
/// peers are told.
template <Task T>
Status runTask(Comm& comm, T& task, size_t largestBytes) {
  comm.enter();
  if (comm.placesRanks()) placeForCall(largestBytes);
  const Status s = pollUntilDone(task);
  if (s.isOk()) {
    comm.flightRecorder().end(s);
  } else {
    task.recordSnapshot();
    markCallFailed(comm, s);
  }
  comm.leave();
  return s;
}

}  // namespace braid
