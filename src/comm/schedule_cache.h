// Recently built schedules of one communicator, keyed by everything a
// builder reads. Training loops repeat the same few collectives, so the
// schedule (a vector of steps, allocations included) is built once per shape
// instead of once per call — that is most of the host overhead of a small
// collective. AllToAllv, whose counts vary per call, is never cached.
#pragma once

#include <cstddef>
#include <memory>

#include "collectives/schedule.h"
#include "core/status.h"

namespace braid {

class ScheduleCache {
 public:
  /// The schedule for `args` under `forcedAlgorithm`, built on a miss.
  Result<std::shared_ptr<const coll::Schedule>> get(const coll::CollArgs& args,
                                                    const std::string& forcedAlgorithm);

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
  };
  static constexpr int kEntries = 16;
  static bool matches(const Entry& e, const coll::CollArgs& args);

  Entry entries_[kEntries] = {};
  uint64_t clock_ = 0;
};

}  // namespace braid
