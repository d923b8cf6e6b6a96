// Recently built schedules of one communicator, keyed by everything a
// builder reads. Training loops repeat the same few collectives, so the
// schedule (a vector of steps, allocations included) is built once per shape
// instead of once per call — that is most of the host overhead of a small
// collective. AllToAllv, whose counts vary per call, is never cached.
//
// Each entry also keeps a Run: the one-element lists the flight recorder and
// the engine take, the ScheduleRunner that executes the schedule and the
// sizes of the buffers. A blocking collective outside a group
// (comm/direct_collective.h) finds its Run straight from the Op and restarts
// that runner on the new buffers, instead of building CollArgs and
// allocating a stage, a runner and their vectors on every call: after the
// first call of a shape, its hot path touches no allocator.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "collectives/schedule.h"
#include "collectives/select.h"
#include "comm/exchange_call.h"
#include "comm/flight_recorder.h"
#include "comm/op.h"
#include "core/status.h"

namespace braid {

class ScheduleCache {
 public:
  /// A cached schedule with what runs it, kept from call to call.
  struct Run {
    FlightRecorder::Schedules schedules;  // exactly one: the entry's schedule
    FlightRecorder::Runners runners;      // empty until first run, then one runner
    BufferBytes bytes;                    // of this rank's send and receive buffers
    // Set when selection picked the exchange: it runs without a runner (comm/exchange_task.h).
    std::unique_ptr<ExchangeCall> exchange;
  };

  /// The schedule for `args` as selection picks it under `overrides`, built on a miss.
  Result<std::shared_ptr<const coll::Schedule>> get(const coll::CollArgs& args,
                                                    const coll::Overrides& overrides);

  /// The Run of the collective `op` (built on a miss). The pointer stays
  /// valid until a later get() or run() on this cache evicts the entry, so
  /// callers use it for one collective at a time. Not for AllToAllv.
  Result<Run*> run(const Op& op, const coll::Overrides& overrides);

 private:
  // Everything a builder reads that varies between calls on one communicator.
  struct Key {
    coll::CollKind kind;
    size_t count;
    braidDataType_t type;
    braidRedOp_t op;
    int root;
    bool inPlace;
    size_t chunkBytes;
    bool operator==(const Key&) const = default;
  };
  struct Entry {
    Key key;
    std::shared_ptr<const coll::Schedule> schedule;  // null: unused entry
    uint64_t lastUse;
    bool exchange;  // the schedule is the exchange all-reduce's
    Run run;        // lists filled lazily by run()
  };
  static constexpr int kEntries = 16;
  static Key keyOf(const coll::CollArgs& args);
  // The entry for `key`, rebuilt from `args` on a miss; null for AllToAllv.
  template <typename MakeArgs>
  Result<Entry*> lookup(const Key& key, MakeArgs&& args, const coll::Overrides& overrides);

  Entry entries_[kEntries] = {};
  uint64_t clock_ = 0;
};

}  // namespace braid
