#include "comm/schedule_cache.h"

#include <algorithm>
#include <string>

#include "collectives/algorithm.h"
#include "collectives/select.h"
#include "comm/comm.h"
#include "comm/exchange_task.h"
#include "comm/runner_task.h"

namespace braid {

ScheduleCache::ScheduleCache() = default;
ScheduleCache::~ScheduleCache() = default;

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
  // Replacing the entry drops its task too; nothing runs it now (see task()).
  *victim = Entry{key,      std::make_shared<const coll::Schedule>(std::move(built)),
                  ++clock_, BufferBytes{coll::sendBufferBytes(args), coll::recvBufferBytes(args)},
                  nullptr,  nullptr};
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

Result<ScheduleCache::Ready> ScheduleCache::task(const Op& op, const coll::Overrides& overrides) {
  // The key straight from the op: toCollArgs() only on a miss.
  const Key key{
      op.coll, op.count, op.type, op.op, op.root, isInPlace(op), op.comm->config().chunkBytes};
  BRAID_ASSIGN_OR_RETURN(Entry * entry, lookup(
                                            key, [&] { return toCollArgs(op); }, overrides));
  if (entry == nullptr) {
    return internalError(std::string(coll::collName(op.coll)) + " has no reusable schedule");
  }
  Ready ready;
  ready.schedule = entry->schedule.get();
  ready.largestBuffer = std::max(entry->bytes.send, entry->bytes.recv);
  if (entry->exchange == nullptr && entry->runner == nullptr) {
    // The exchange needs no runner: its own requests and staging (comm/exchange_task.h).
    if (entry->schedule->algorithm == "exchange") {
      entry->exchange = std::make_unique<ExchangeTask>(*op.comm, entry->bytes.send);
    } else {
      entry->runner = std::make_unique<RunnerTask>(*op.comm, entry->schedule, entry->bytes);
    }
  }
  if (entry->exchange != nullptr) {
    entry->exchange->bind(op);
    ready.exchange = entry->exchange.get();
  } else {
    entry->runner->bind(op);
    ready.runner = entry->runner.get();
  }
  return ready;
}

}  // namespace braid
