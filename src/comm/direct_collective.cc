#include "comm/direct_collective.h"

#include <algorithm>
#include <memory>

#include "collectives/host/schedule_runner.h"
#include "comm/call_failure.h"
#include "comm/comm.h"
#include "comm/core_spreading.h"
#include "comm/engine.h"
#include "comm/exchange_task.h"
#include "comm/poll_until_done.h"
#include "core/log.h"

namespace braid {
namespace {

using coll::ScheduleRunner;

// Points *run at the cache's Run for `op` (built on first use) and, unless the exchange
// runs it, restarts the Run's runner on the op's buffers.
Status prepareRun(Comm& comm, const Op& op, ScheduleCache::Run** run) {
  BRAID_ASSIGN_OR_RETURN(*run, comm.schedules().run(op, comm.overrides()));
  if (comm.placesRanks()) placeForCall(std::max((*run)->bytes.send, (*run)->bytes.recv));
  const coll::Schedule& schedule = *(*run)->schedules.front();
  // The engine's line, word for word: tests and users grep for the algorithm chosen.
  BRAID_TRACE("%s: %zu elements, %s, %zu steps", op.apiName, op.count, schedule.algorithm.c_str(),
              schedule.steps.size());
  if ((*run)->exchange != nullptr) return Status::ok();
  coll::Buffers b;
  b.send = static_cast<const uint8_t*>(op.send);
  b.recv = static_cast<uint8_t*>(op.recv);
  b.sendBytes = (*run)->bytes.send;
  b.recvBytes = (*run)->bytes.recv;
  b.scratchBytes = schedule.scratchBytes;
  // Looked up per call: another shape may have grown (moved) the scratch buffer.
  b.scratch = b.scratchBytes ? comm.scratch(b.scratchBytes) : nullptr;
  FlightRecorder::Runners& runners = (*run)->runners;
  if (runners.empty()) {
    runners.push_back(std::make_unique<ScheduleRunner>(comm.transport(), &schedule, b, op.type,
                                                       op.op, comm.nranks()));
  } else {
    runners.front()->restart(b);
  }
  return Status::ok();
}

// One call's schedule runner as a task (comm/task.h), recording into the
// flight recorder with the call's schedules. The runner posts at its first poll.
class RunnerTask : public OneCommTask {
 public:
  RunnerTask(Comm& comm, const Op& op, ScheduleCache::Run& run)
      : OneCommTask(comm, op.apiName), op_(op), run_(run), runner_(*run.runners.front()) {}
  Status post() { return Status::ok(); }
  Status progress(bool* progressed) { return runner_.progress(progressed); }
  bool done() const { return runner_.done(); }
  int pendingPeer() const {
    bool receiving = false;
    return runner_.pendingPeer(&receiving);
  }
  std::string describePending() const { return runner_.describePending(); }
  void recordBegin() { comm_.flightRecorder().begin(op_, 1, false, run_.schedules); }
  void recordSnapshot() { comm_.flightRecorder().snapshot(run_.runners); }

 private:
  const Op& op_;
  ScheduleCache::Run& run_;
  ScheduleRunner& runner_;
};

// The Run's task to completion: the exchange (and its reduction) or the runner.
Status runPrepared(Comm& comm, const Op& op, ScheduleCache::Run& run) {
  if (run.exchange != nullptr) {
    ExchangeTask task(comm, *run.exchange, op);
    BRAID_RETURN_IF_ERROR(pollUntilDone(task));
    run.exchange->reduce(op);
    return Status::ok();
  }
  RunnerTask task(comm, op, run);
  return pollUntilDone(task);
}

}  // namespace

Status runCollectiveDirect(const Op& op) {
  Comm& comm = *op.comm;
  const bool checked = comm.config().checkArguments && comm.nranks() > 1;
  if (checked || op.coll == coll::CollKind::kAllToAllv) return runOps({&op, 1});
  if (movesNothing(op)) return Status::ok();
  comm.enter();
  ScheduleCache::Run* run = nullptr;
  Status s = prepareRun(comm, op, &run);
  if (s.isOk()) {
    s = runPrepared(comm, op, *run);
  } else {
    s = inCall(s, op.apiName, comm.rank());
  }
  if (s.isOk()) {
    comm.flightRecorder().end(s);
  } else {
    if (run != nullptr && !run->runners.empty()) comm.flightRecorder().snapshot(run->runners);
    markCallFailed(comm, s);
  }
  comm.leave();
  return s;
}

}  // namespace braid
