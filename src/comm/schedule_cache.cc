#include "comm/schedule_cache.h"

#include "collectives/algorithm.h"

namespace braid {

bool ScheduleCache::matches(const Entry& e, const coll::CollArgs& args) {
  return e.schedule != nullptr && e.kind == args.kind && e.count == args.count &&
         e.type == args.type && e.op == args.op && e.root == args.root &&
         e.inPlace == args.inPlace && e.chunkBytes == args.chunkBytes;
}

Result<ScheduleCache::Entry*> ScheduleCache::lookup(const coll::CollArgs& args,
                                                    const std::string& forcedAlgorithm) {
  if (args.kind == coll::CollKind::kAllToAllv) return static_cast<Entry*>(nullptr);
  Entry* victim = &entries_[0];
  for (Entry& e : entries_) {
    if (matches(e, args)) {
      e.lastUse = ++clock_;
      return &e;
    }
    if (e.lastUse < victim->lastUse) victim = &e;
  }
  BRAID_ASSIGN_OR_RETURN(coll::Schedule built, coll::buildSchedule(args, forcedAlgorithm));
  // Replacing the entry drops its runner too; nothing runs it now (see run()).
  *victim = Entry{args.kind,       args.count,
                  args.type,       args.op,
                  args.root,       args.inPlace,
                  args.chunkBytes, std::make_shared<const coll::Schedule>(std::move(built)),
                  ++clock_,        Run{}};
  return victim;
}

Result<std::shared_ptr<const coll::Schedule>> ScheduleCache::get(
    const coll::CollArgs& args, const std::string& forcedAlgorithm) {
  BRAID_ASSIGN_OR_RETURN(Entry * entry, lookup(args, forcedAlgorithm));
  if (entry != nullptr) return entry->schedule;
  BRAID_ASSIGN_OR_RETURN(coll::Schedule built, coll::buildSchedule(args, forcedAlgorithm));
  return std::make_shared<const coll::Schedule>(std::move(built));
}

Result<ScheduleCache::Run*> ScheduleCache::run(const coll::CollArgs& args,
                                               const std::string& forcedAlgorithm) {
  BRAID_ASSIGN_OR_RETURN(Entry * entry, lookup(args, forcedAlgorithm));
  if (entry == nullptr) {
    return internalError(std::string(coll::collName(args.kind)) + " has no reusable schedule");
  }
  if (entry->run.schedules.empty()) entry->run.schedules.push_back(entry->schedule);
  return &entry->run;
}

}  // namespace braid
