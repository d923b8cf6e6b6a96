#include "comm/schedule_cache.h"

#include "collectives/algorithm.h"
#include "collectives/select.h"
#include "comm/comm.h"

namespace braid {

ScheduleCache::Key ScheduleCache::keyOf(const coll::CollArgs& args) {
  return Key{args.kind, args.count, args.type, args.op, args.root, args.inPlace, args.chunkBytes};
}

template <typename MakeArgs>
Result<ScheduleCache::Entry*> ScheduleCache::lookup(const Key& key, MakeArgs&& makeArgs,
                                                    const coll::Overrides& overrides) {
  if (key.kind == coll::CollKind::kAllToAllv) return static_cast<Entry*>(nullptr);
  Entry* victim = &entries_[0];
  for (Entry& e : entries_) {
    if (e.schedule != nullptr && e.key == key) {
      e.lastUse = ++clock_;
      return &e;
    }
    if (e.lastUse < victim->lastUse) victim = &e;
  }
  const coll::CollArgs args = makeArgs();
  BRAID_ASSIGN_OR_RETURN(coll::Schedule built,
                         coll::buildSelected(args, coll::MemoryKind::kHost, overrides));
  // Replacing the entry drops its runner too; nothing runs it now (see run()).
  auto schedule = std::make_shared<const coll::Schedule>(std::move(built));
  const bool exchange = schedule->algorithm == "exchange";
  *victim = Entry{key, std::move(schedule), ++clock_, exchange, Run{}};
  victim->run.bytes = {coll::sendBufferBytes(args), coll::recvBufferBytes(args)};
  return victim;
}

Result<std::shared_ptr<const coll::Schedule>> ScheduleCache::get(const coll::CollArgs& args,
                                                                 const coll::Overrides& overrides) {
  BRAID_ASSIGN_OR_RETURN(Entry * entry, lookup(
                                            keyOf(args), [&] { return args; }, overrides));
  if (entry != nullptr) return entry->schedule;
  BRAID_ASSIGN_OR_RETURN(coll::Schedule built,
                         coll::buildSelected(args, coll::MemoryKind::kHost, overrides));
  return std::make_shared<const coll::Schedule>(std::move(built));
}

Result<ScheduleCache::Run*> ScheduleCache::run(const Op& op, const coll::Overrides& overrides) {
  // The key straight from the op: toCollArgs() only on a miss.
  const Key key{
      op.coll, op.count, op.type, op.op, op.root, isInPlace(op), op.comm->config().chunkBytes};
  BRAID_ASSIGN_OR_RETURN(Entry * entry, lookup(
                                            key, [&] { return toCollArgs(op); }, overrides));
  if (entry == nullptr) {
    return internalError(std::string(coll::collName(op.coll)) + " has no reusable schedule");
  }
  if (entry->run.schedules.empty()) {
    entry->run.schedules.push_back(entry->schedule);
    if (entry->exchange)
      entry->run.exchange = std::make_unique<ExchangeCall>(*op.comm, entry->run.bytes.send);
  }
  return &entry->run;
}

}  // namespace braid
