#include "comm/direct_collective.h"

#include <algorithm>
#include <memory>

#include "collectives/host/schedule_runner.h"
#include "comm/call_failure.h"
#include "comm/comm.h"
#include "comm/core_spreading.h"
#include "comm/engine.h"
#include "comm/poll_until_done.h"
#include "comm/tiny_allreduce.h"
#include "core/log.h"

namespace braid {
namespace {

using coll::ScheduleRunner;

// Points *run at the cache's Run for `op`, its runner (built on first use)
// restarted on the op's buffers.
Status prepareRun(Comm& comm, const Op& op, ScheduleCache::Run** run) {
  BRAID_ASSIGN_OR_RETURN(*run, comm.schedules().run(op, comm.overrides()));
  if (comm.placesRanks()) placeForCall(std::max((*run)->bytes.send, (*run)->bytes.recv));
  const coll::Schedule& schedule = *(*run)->schedules.front();
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
  // The engine's line, word for word: tests and users grep for the algorithm chosen.
  BRAID_TRACE("%s: %zu elements, %s, %zu steps", op.apiName, op.count, schedule.algorithm.c_str(),
              schedule.steps.size());
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

}  // namespace

Status runCollectiveDirect(const Op& op) {
  Comm& comm = *op.comm;
  const bool checked = comm.config().checkArguments && comm.nranks() > 1;
  if (checked || op.coll == coll::CollKind::kAllToAllv) return runOps({&op, 1});
  if (movesNothing(op)) return Status::ok();
  if (TinyAllReduce* tiny = comm.tinyAllReduce(); tiny != nullptr && tiny->takes(op)) {
    return tiny->run(op);
  }
  comm.enter();
  ScheduleCache::Run* run = nullptr;
  Status s = prepareRun(comm, op, &run);
  if (s.isOk()) {
    RunnerTask task(comm, op, *run);
    s = pollUntilDone(task);
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
