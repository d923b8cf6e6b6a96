#include "comm/direct_collective.h"

#include <algorithm>
#include <memory>

#include "collectives/host/schedule_runner.h"
#include "comm/call_failure.h"
#include "comm/comm.h"
#include "comm/core_spreading.h"
#include "comm/engine.h"
#include "comm/idle_wait.h"
#include "comm/stall_diagnosis.h"
#include "comm/tiny_allreduce.h"
#include "core/log.h"

namespace braid {
namespace {

using coll::ScheduleRunner;

// Points *run at the cache's Run for `op`, its runner (built on first use)
// restarted on the op's buffers.
Status prepareRun(Comm& comm, const Op& op, ScheduleCache::Run** run) {
  BRAID_ASSIGN_OR_RETURN(*run, comm.schedules().run(op, comm.config().algorithm));
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

// Polls `runner` until it is done, waiting as the engine does when idle.
// Errors come back with the call named, as the engine words them.
Status drive(Comm& comm, const Op& op, ScheduleCache::Run& run) {
  ScheduleRunner& runner = *run.runners.front();
  IdleWait idle(comm.config().timeoutSeconds, comm.spinRounds());
  StallDiagnosis stall;
  bool recorded = false;
  while (true) {
    bool progressed = false;
    Status s = runner.progress(&progressed);
    if (!recorded) {
      // Only now, once the first poll has posted this rank's first sends: the
      // peers wait for those, not for the bookkeeping.
      comm.flightRecorder().begin(op, 1, false, run.schedules);
      recorded = true;
    }
    if (!s.isOk()) return inCall(s, op.apiName, comm.rank());
    if (runner.done()) return Status::ok();
    if (progressed) {
      idle.progressed();
      stall.progressed();
      continue;
    }
    if (comm.abortRequested()) return abortCalledError(comm.rank());
    if (idle.expired()) {
      bool receiving = false;
      const int peer = runner.pendingPeer(&receiving);
      if (stall.reportFirst(comm, peer, idle)) continue;
      return stallError(comm, op.apiName, idle.timeoutSeconds(), runner.describePending(), peer);
    }
    if (idle.pauseBriefly()) continue;
    comm.flightRecorder().snapshot(run.runners);  // what a signal or a timeout would print
    transport::Transport* t = comm.transport();
    s = t != nullptr ? t->waitForActivity(idle.deadline(), 100)
                     : internalError("a single-rank communicator waits for a peer");
    if (!s.isOk()) return inCall(s, op.apiName, comm.rank());
  }
}

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
    s = drive(comm, op, *run);
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
