// Recently built schedules of one communicator, keyed by everything a
// builder reads. Training loops repeat the same few collectives, so the
// schedule (a vector of steps, allocations included) is built once per shape
// instead of once per call — that is most of the host overhead of a small
// collective. AllToAllv, whose counts vary per call, is never cached.
//
// Each entry also keeps a Run: the one-element lists the flight recorder and
// the engine take, and the ScheduleRunner that executes the schedule. A
// blocking collective outside a group (comm/direct_collective.h) restarts
// that runner on the new buffers instead of allocating a stage, a runner and
// their vectors on every call: after the first call of a shape, its hot path
// touches no allocator.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "collectives/schedule.h"
#include "comm/flight_recorder.h"
#include "core/status.h"

namespace braid {

class ScheduleCache {
 public:
  /// A cached schedule with what runs it, kept from call to call.
  struct Run {
    FlightRecorder::Schedules schedules;  // exactly one: the entry's schedule
    FlightRecorder::Runners runners;      // empty until first run, then one runner
  };

  /// The schedule for `args` under `forcedAlgorithm`, built on a miss.
  Result<std::shared_ptr<const coll::Schedule>> get(const coll::CollArgs& args,
                                                    const std::string& forcedAlgorithm);

  /// The cached Run for `args` (built on a miss). The pointer stays valid
  /// until a later get() or run() on this cache evicts the entry, so callers
  /// use it for one collective at a time. Not for AllToAllv (never cached).
  Result<Run*> run(const coll::CollArgs& args, const std::string& forcedAlgorithm);

 private:
  struct Entry {
    coll::CollKind kind;
    size_t count;
    braidDataType_t type;
    braidRedOp_t op;
    int root;
    bool inPlace;
    size_t chunkBytes;
    std::shared_ptr<const coll::Schedule> schedule;
    uint64_t lastUse;
    Run run;  // built lazily by run()
  };
  static constexpr int kEntries = 16;
  static bool matches(const Entry& e, const coll::CollArgs& args);
  // The entry for `args`, rebuilt on a miss; null for AllToAllv.
  Result<Entry*> lookup(const coll::CollArgs& args, const std::string& forcedAlgorithm);

  Entry entries_[kEntries] = {};
  uint64_t clock_ = 0;
};

}  // namespace braid
