#include "comm/direct_collective.h"

#include "comm/call_failure.h"
#include "comm/comm.h"
#include "comm/engine.h"
#include "comm/exchange_task.h"
#include "comm/run_task.h"
#include "comm/runner_task.h"
#include "core/log.h"

namespace braid {

Status runCollectiveDirect(const Op& op) {
  Comm& comm = *op.comm;
  if (comm.checksCalls() || op.coll == coll::CollKind::kAllToAllv) return runOps({&op, 1});
  if (movesNothing(op)) return Status::ok();
  Result<ScheduleCache::Ready> ready = comm.schedules().task(op, comm.overrides());
  if (!ready.isOk()) {
    const Status s = inCall(ready.status(), op.apiName, comm.rank());
    markCallFailed(comm, s);
    return s;
  }
  const ScheduleCache::Ready& task = ready.value();
  // The engine's line, word for word: tests and users grep for the algorithm chosen.
  BRAID_TRACE("%s: %zu elements, %s, %zu steps", op.apiName, op.count,
              task.schedule->algorithm.c_str(), task.schedule->steps.size());
  if (task.runner != nullptr) return runTask(comm, *task.runner, task.largestBuffer);
  BRAID_RETURN_IF_ERROR(runTask(comm, *task.exchange, task.largestBuffer));
  task.exchange->finish();
  return Status::ok();
}

}  // namespace braid
