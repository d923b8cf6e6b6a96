#include "comm/schedule_cache.h"

#include "collectives/algorithm.h"

namespace braid {

bool ScheduleCache::matches(const Entry& e, const coll::CollArgs& args) {
  return e.schedule != nullptr && e.kind == args.kind && e.count == args.count &&
         e.type == args.type && e.op == args.op && e.root == args.root &&
         e.inPlace == args.inPlace && e.chunkBytes == args.chunkBytes;
}

Result<std::shared_ptr<const coll::Schedule>> ScheduleCache::get(
    const coll::CollArgs& args, const std::string& forcedAlgorithm) {
  const bool cacheable = args.kind != coll::CollKind::kAllToAllv;
  Entry* victim = &entries_[0];
  if (cacheable) {
    for (Entry& e : entries_) {
      if (matches(e, args)) {
        e.lastUse = ++clock_;
        return e.schedule;
      }
      if (e.lastUse < victim->lastUse) victim = &e;
    }
  }
  BRAID_ASSIGN_OR_RETURN(coll::Schedule built, coll::buildSchedule(args, forcedAlgorithm));
  auto schedule = std::make_shared<const coll::Schedule>(std::move(built));
  if (cacheable) {
    *victim = Entry{args.kind,    args.count,      args.type, args.op, args.root,
                    args.inPlace, args.chunkBytes, schedule,  ++clock_};
  }
  return schedule;
}

}  // namespace braid
