// Recently built schedules of one communicator, keyed by everything a
// builder reads. Training loops repeat the same few collectives, so the
// schedule (a vector of steps, allocations included) is built once per shape
// instead of once per call — that is most of the host overhead of a small
// collective. AllToAllv, whose counts vary per call, is never cached.
//
// Each entry also keeps the task that runs its schedule (comm/task.h): the
// exchange's (comm/exchange_task.h) where selection picked the exchange, else
// a ScheduleRunner's (comm/runner_task.h). A blocking collective outside a
// group (comm/direct_collective.h) gets that task straight from the Op, bound
// to its buffers and ready to post, instead of building CollArgs and
// allocating a stage, a runner and their vectors on every call: after the
// first call of a shape, its hot path touches no allocator. The engine, which
// runs several schedules side by side, takes the schedule itself (get()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "collectives/schedule.h"
#include "collectives/select.h"
#include "comm/op.h"
#include "core/status.h"

namespace braid {

class ExchangeTask;  // comm/exchange_task.h
class RunnerTask;    // comm/runner_task.h

class ScheduleCache {
 public:
  ScheduleCache();
  ~ScheduleCache();
  ScheduleCache(const ScheduleCache&) = delete;
  ScheduleCache& operator=(const ScheduleCache&) = delete;

  /// A cached call's task, bound to the call and ready to post: exactly one of the two.
  struct Ready {
    ExchangeTask* exchange = nullptr;
    RunnerTask* runner = nullptr;
    const coll::Schedule* schedule = nullptr;  // the entry's, for the trace line
    size_t largestBuffer = 0;  // bytes of the larger of the call's send and receive buffers
  };

  /// The schedule for `args` as selection picks it under `overrides`, built on a miss.
  Result<std::shared_ptr<const coll::Schedule>> get(const coll::CollArgs& args,
                                                    const coll::Overrides& overrides);

  /// The task of the collective `op` (its entry built on a miss), bound to `op`. It stays
  /// valid until a later get() or task() on this cache evicts the entry, so callers run
  /// one collective at a time. Not for AllToAllv.
  Result<Ready> task(const Op& op, const coll::Overrides& overrides);

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
    Key key{};
    std::shared_ptr<const coll::Schedule> schedule;  // null: unused entry
    uint64_t lastUse = 0;
    BufferBytes bytes;  // of this rank's send and receive buffers
    // Made by task() at the entry's first direct call: one of the two.
    std::unique_ptr<ExchangeTask> exchange;
    std::unique_ptr<RunnerTask> runner;
  };
  static constexpr int kEntries = 16;
  static Key keyOf(const coll::CollArgs& args);
  // The entry for `key`, rebuilt from `args` on a miss; null for AllToAllv.
  template <typename MakeArgs>
  Result<Entry*> lookup(const Key& key, MakeArgs&& args, const coll::Overrides& overrides);

  Entry entries_[kEntries];  // made and destroyed in the .cc, where the tasks are complete
  uint64_t clock_ = 0;
};

}  // namespace braid
