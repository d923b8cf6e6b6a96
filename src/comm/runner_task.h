// A cached collective's schedule runner as a task (comm/task.h): what the schedule cache
// (comm/schedule_cache.h) hands out, ready to post, for every algorithm but the exchange
// (comm/exchange_task.h). The cache makes it once per shape and binds it to each call's
// buffers: after the first call, the runner is restarted, never rebuilt, and nothing is
// allocated. It records into the flight recorder with its schedule; the runner posts at
// its first poll.
#pragma once

#include <memory>
#include <string>

#include "collectives/host/schedule_runner.h"
#include "comm/comm.h"
#include "comm/flight_recorder.h"
#include "comm/op.h"
#include "comm/task.h"
#include "core/status.h"

namespace braid {

class RunnerTask : public OneCommTask {
 public:
  /// For calls whose buffers span `bytes`, running `schedule` on `comm`.
  RunnerTask(Comm& comm, std::shared_ptr<const coll::Schedule> schedule, BufferBytes bytes)
      : OneCommTask(comm, ""), bytes_(bytes) {
    schedules_.push_back(std::move(schedule));
  }

  /// Ready to post on `op`'s buffers (a collective of this task's shape): the runner,
  /// made at the first call, restarted.
  void bind(const Op& op);

  const coll::Schedule& schedule() const { return *schedules_.front(); }

  Status post() { return Status::ok(); }
  Status progress(bool* progressed) { return runners_.front()->progress(progressed); }
  bool done() const { return runners_.front()->done(); }
  int pendingPeer() const {
    bool receiving = false;
    return runners_.front()->pendingPeer(&receiving);
  }
  std::string describePending() const { return runners_.front()->describePending(); }
  void recordBegin() { comm_.flightRecorder().begin(*op_, 1, false, schedules_); }
  void recordSnapshot() { comm_.flightRecorder().snapshot(runners_); }

 private:
  const Op* op_ = nullptr;               // the call bound last
  FlightRecorder::Schedules schedules_;  // exactly one: the entry's schedule
  FlightRecorder::Runners runners_;      // empty until the first bind, then one runner
  const BufferBytes bytes_;
};

}  // namespace braid
