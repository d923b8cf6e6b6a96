#include "support/schedule_simulator.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <utility>

#include "collectives/algorithms/patterns.h"
#include "collectives/select.h"
#include "core/kernels/reduce.h"
#include "core/types.h"

namespace braid::testing {

using coll::Action;
using coll::ActionKind;
using coll::BufferId;
using coll::CollArgs;
using coll::CollKind;
using coll::Schedule;
using coll::Span;

SimRank makeSimRank(const CollArgs& args, uint8_t fill) {
  SimRank rank;
  rank.args = args;
  const size_t sendBytes = coll::sendBufferBytes(args);
  const size_t recvBytes = coll::recvBufferBytes(args);
  const long block = static_cast<long>(args.count * typeSize(args.type));
  const bool root = args.rank == args.root;
  auto place = [&](size_t bytes, long send, long recv) {
    rank.memory.assign(bytes, fill);
    rank.sendOffset = send;
    rank.recvOffset = recv;
  };
  if (args.kind == CollKind::kBarrier) {
    place(0, -1, -1);
  } else if (!args.inPlace) {
    place(sendBytes + recvBytes, sendBytes > 0 ? 0 : -1,
          recvBytes > 0 ? static_cast<long>(sendBytes) : -1);
  } else if (args.kind == CollKind::kAllGather) {
    place(recvBytes, args.rank * block, 0);
  } else if (args.kind == CollKind::kReduceScatter) {
    place(sendBytes, 0, args.rank * block);
  } else if (args.kind == CollKind::kGather && root) {
    place(recvBytes, args.rank * block, 0);
  } else if (args.kind == CollKind::kScatter && root) {
    place(sendBytes, 0, args.rank * block);
  } else if (args.kind == CollKind::kGather) {
    place(sendBytes, 0, -1);  // a non-root has no recv to alias
  } else if (args.kind == CollKind::kScatter) {
    place(recvBytes, -1, 0);
  } else {
    place(std::max(sendBytes, recvBytes), 0, 0);
  }
  return rank;
}

namespace {

std::string where(int rank, size_t step, size_t action) {
  return "rank " + std::to_string(rank) + " step " + std::to_string(step) + " action " +
         std::to_string(action);
}

const char* kindName(ActionKind kind) {
  static const char* const kNames[] = {"send", "recv", "recv-reduce", "copy", "divide", "reduce"};
  return kNames[static_cast<int>(kind)];
}

bool isTransfer(ActionKind kind) {
  return kind == ActionKind::kSend || kind == ActionKind::kRecv || kind == ActionKind::kRecvReduce;
}
bool isReceive(ActionKind kind) {
  return kind == ActionKind::kRecv || kind == ActionKind::kRecvReduce;
}

// The message size an action moves: a send's source, a receive's destination.
size_t messageBytes(const Action& action) {
  return action.kind == ActionKind::kSend ? action.src.bytes : action.dst.bytes;
}

// A half-open range of real memory touched by one action.
struct Access {
  const uint8_t* begin;
  const uint8_t* end;
  bool write;
  size_t action;
};

// One ordered pair's connector: messages in flight, oldest first.
struct Channel {
  struct Message {
    std::vector<uint8_t> data;
    size_t seq;
  };
  std::deque<Message> queue;
  size_t posted = 0;    // sends posted so far (the next send's sequence number)
  size_t consumed = 0;  // messages received so far
  size_t receivesPosted = 0;
};

class Simulation {
 public:
  Simulation(std::vector<SimRank>& ranks, const std::vector<Schedule>& schedules,
             Buffering buffering)
      : ranks_(ranks), schedules_(schedules), buffering_(buffering), n_(ranks.size()) {
    for (size_t r = 0; r < n_; ++r) {
      // Scratch starts as garbage, so reading it before writing shows in the results.
      scratch_.emplace_back(schedules[r].scratchBytes, uint8_t{0xCD});
      buffers_.push_back(
          Buffers{{ranks[r].send(), ranks[r].recv(), scratch_[r].data()},
                  {coll::sendBufferBytes(ranks[r].args), coll::recvBufferBytes(ranks[r].args),
                   schedules[r].scratchBytes}});
    }
  }

  Status validate() {
    for (size_t r = 0; r < n_; ++r) {
      if (schedules_[r].algorithm != schedules_[0].algorithm) {
        return internalError("rank " + std::to_string(r) + " chose algorithm '" +
                             schedules_[r].algorithm + "' but rank 0 chose '" +
                             schedules_[0].algorithm + "'");
      }
      for (size_t s = 0; s < schedules_[r].steps.size(); ++s) {
        const std::vector<Action>& actions = schedules_[r].steps[s].actions;
        for (size_t a = 0; a < actions.size(); ++a) {
          BRAID_RETURN_IF_ERROR(checkAction(r, actions, a).withContext(where(r, s, a)));
        }
        BRAID_RETURN_IF_ERROR(checkWaitingTransfersLast(actions).withContext(
            "rank " + std::to_string(r) + " step " + std::to_string(s)));
        BRAID_RETURN_IF_ERROR(
            checkHazards(r, actions)
                .withContext("rank " + std::to_string(r) + " step " + std::to_string(s)));
      }
    }
    return checkMatching(schedules_);
  }

  Status run() {
    std::vector<Progress> ranks(n_);
    size_t finished = 0;
    for (size_t r = 0; r < n_; ++r) {
      enterStep(r, ranks[r]);
      finished += ranks[r].step == schedules_[r].steps.size();
    }
    while (finished < n_) {
      bool progressed = false;
      for (size_t r = 0; r < n_; ++r) {
        Progress& rank = ranks[r];
        while (rank.step < schedules_[r].steps.size()) {
          BRAID_RETURN_IF_ERROR(advance(r, rank, &progressed));
          if (!std::all_of(rank.phase.begin(), rank.phase.end(),
                           [](Phase p) { return p == Phase::kDone; })) {
            break;
          }
          ++rank.step;
          enterStep(r, rank);
          finished += rank.step == schedules_[r].steps.size();
        }
      }
      if (!progressed && finished < n_) return deadlock(ranks);
    }
    for (const auto& [pair, channel] : channels_) {
      if (!channel.queue.empty()) {
        return internalError("rank " + std::to_string(pair.first) + " sent " +
                             std::to_string(channel.queue.size()) + " message(s) to rank " +
                             std::to_string(pair.second) + " that were never received");
      }
    }
    return Status::ok();
  }

 private:
  // Where kSend, kRecv and kScratch of rank r live, and their sizes as the schedule sees them.
  struct Buffers {
    uint8_t* base[3];
    size_t bytes[3];
  };

  size_t bufferSize(size_t r, BufferId buf) const {
    return buffers_[r].bytes[static_cast<int>(buf)];
  }

  uint8_t* resolve(size_t r, const Span& span) const {
    uint8_t* base = buffers_[r].base[static_cast<int>(span.buf)];
    return base == nullptr ? nullptr : base + span.offset;
  }

  Status checkSpan(size_t r, const Span& span, const char* role) const {
    const size_t elem = typeSize(ranks_[r].args.type);
    if (span.offset + span.bytes > bufferSize(r, span.buf) && span.bytes > 0) {
      return internalError(std::string(role) + " span [" + std::to_string(span.offset) + ", +" +
                           std::to_string(span.bytes) + ") exceeds buffer " +
                           std::to_string(static_cast<int>(span.buf)) + " of " +
                           std::to_string(bufferSize(r, span.buf)) + " bytes");
    }
    if (span.bytes % elem != 0 || (span.bytes > 0 && span.offset % elem != 0)) {
      return internalError(std::string(role) + " span is not in whole elements");
    }
    return Status::ok();
  }

  Status checkAction(size_t r, const std::vector<Action>& actions, size_t a) const {
    const Action& action = actions[a];
    const CollArgs& args = ranks_[r].args;
    if (action.after < -1 || action.after >= static_cast<int>(a)) {
      return internalError("`after` must name an earlier action of the step");
    }
    if (isTransfer(action.kind)) {
      if (action.peer < 0 || action.peer >= args.nranks || action.peer == args.rank) {
        return internalError("peer " + std::to_string(action.peer) + " is not another rank");
      }
      size_t limit = coll::chunkElems(args.chunkBytes, typeSize(args.type)) * typeSize(args.type);
      // The one exception: a 2-rank chain broadcast, where nobody forwards, sends its whole
      // buffer as one message (ring_broadcast.cc).
      const bool unchunked = args.kind == coll::CollKind::kBroadcast && args.nranks == 2 &&
                             schedules_[r].algorithm == "ring";
      if (messageBytes(action) > limit && !unchunked) {
        return internalError("message of " + std::to_string(messageBytes(action)) +
                             " bytes exceeds the chunk size " + std::to_string(limit));
      }
    }
    bool readsSrc = action.kind == ActionKind::kSend || action.kind == ActionKind::kCopy ||
                    action.kind == ActionKind::kRecvReduce || action.kind == ActionKind::kReduce;
    bool writesDst = action.kind != ActionKind::kSend;
    if (readsSrc) BRAID_RETURN_IF_ERROR(checkSpan(r, action.src, "source"));
    if (writesDst) BRAID_RETURN_IF_ERROR(checkSpan(r, action.dst, "destination"));
    if (readsSrc && writesDst && action.src.bytes != action.dst.bytes) {
      return internalError("source and destination sizes differ");
    }
    return Status::ok();
  }

  // The memory an action reads and writes; a copy onto itself touches nothing
  // (the executor skips it). Partial self-overlap is an error.
  Status accesses(size_t r, const Action& action, size_t index, std::vector<Access>* out) {
    auto range = [&](const Span& span, bool write) {
      const uint8_t* p = resolve(r, span);
      if (span.bytes > 0) out->push_back(Access{p, p + span.bytes, write, index});
    };
    if (action.kind == ActionKind::kSend) {
      range(action.src, false);
      return Status::ok();
    }
    if (action.kind == ActionKind::kRecv || action.kind == ActionKind::kDivide) {
      range(action.dst, true);
      return Status::ok();
    }
    const uint8_t* src = resolve(r, action.src);
    const uint8_t* dst = resolve(r, action.dst);
    if (src != dst && action.src.bytes > 0 && src < dst + action.dst.bytes &&
        dst < src + action.src.bytes) {
      return internalError("action " + std::to_string(index) +
                           " reads and writes partially overlapping memory");
    }
    if (action.kind == ActionKind::kCopy && src == dst) return Status::ok();
    range(action.src, false);
    range(action.dst, true);
    return Status::ok();
  }

  // Executors post a step's independent transfers on entry and the ones that wait on
  // `after` later; to keep each connector's FIFO order, nothing may follow a waiting
  // transfer on its connector and direction within the step.
  static Status checkWaitingTransfersLast(const std::vector<Action>& actions) {
    std::map<std::pair<int, bool>, size_t> last;  // (peer, receives) -> last transfer
    for (size_t a = 0; a < actions.size(); ++a) {
      if (isTransfer(actions[a].kind)) last[{actions[a].peer, isReceive(actions[a].kind)}] = a;
    }
    for (size_t a = 0; a < actions.size(); ++a) {
      const Action& action = actions[a];
      if (!isTransfer(action.kind) || action.after < 0) continue;
      size_t after = last[{action.peer, isReceive(action.kind)}];
      if (after != a) {
        return internalError("action " + std::to_string(a) + " waits on `after` but action " +
                             std::to_string(after) + " uses the same connector later");
      }
    }
    return Status::ok();
  }

  static bool ordered(const std::vector<Action>& actions, size_t early, size_t late) {
    for (int a = actions[late].after; a >= 0; a = actions[a].after) {
      if (static_cast<size_t>(a) == early) return true;
    }
    return false;
  }

  // Sweeps the step's accesses sorted by address; overlapping pairs in which one side
  // writes must be ordered by `after`.
  Status checkHazards(size_t r, const std::vector<Action>& actions) {
    std::vector<Access> all;
    for (size_t a = 0; a < actions.size(); ++a) {
      BRAID_RETURN_IF_ERROR(accesses(r, actions[a], a, &all));
    }
    std::sort(all.begin(), all.end(),
              [](const Access& x, const Access& y) { return x.begin < y.begin; });
    std::vector<const Access*> open;
    for (const Access& access : all) {
      open.erase(std::remove_if(open.begin(), open.end(),
                                [&](const Access* o) { return o->end <= access.begin; }),
                 open.end());
      for (const Access* o : open) {
        if (o->action == access.action || (!o->write && !access.write)) continue;
        size_t early = std::min(o->action, access.action);
        size_t late = std::max(o->action, access.action);
        if (!ordered(actions, early, late)) {
          return internalError("actions " + std::to_string(early) + " (" +
                               kindName(actions[early].kind) + ") and " + std::to_string(late) +
                               " (" + kindName(actions[late].kind) +
                               ") touch the same memory, one writing, without `after`");
        }
      }
      open.push_back(&access);
    }
    return Status::ok();
  }

  enum class Phase : uint8_t { kIdle, kPosted, kDone };

  // One rank's position: its step and the state of that step's actions.
  struct Progress {
    size_t step = 0;
    std::vector<Phase> phase;
    std::vector<size_t> seq;         // a posted transfer's number on its channel
    std::vector<int> earlierOnLink;  // the step's previous transfer on the same connector and
                                     // direction, or -1: it must be posted first (FIFO)
  };

  void enterStep(size_t r, Progress& rank) {
    if (rank.step >= schedules_[r].steps.size()) return;
    const std::vector<Action>& actions = schedules_[r].steps[rank.step].actions;
    rank.phase.assign(actions.size(), Phase::kIdle);
    rank.seq.assign(actions.size(), 0);
    rank.earlierOnLink.assign(actions.size(), -1);
    std::map<std::pair<int, bool>, int> last;  // (peer, receives) -> latest transfer
    for (size_t a = 0; a < actions.size(); ++a) {
      if (!isTransfer(actions[a].kind)) continue;
      auto [it, fresh] = last.try_emplace({actions[a].peer, isReceive(actions[a].kind)}, a);
      if (!fresh) rank.earlierOnLink[a] = std::exchange(it->second, static_cast<int>(a));
    }
  }

  Channel& channel(size_t from, size_t to) { return channels_[{from, to}]; }

  // Posts what may start, completes what can, until this step of rank r is stuck or done.
  Status advance(size_t r, Progress& rank, bool* progressed) {
    const std::vector<Action>& actions = schedules_[r].steps[rank.step].actions;
    const CollArgs& args = ranks_[r].args;
    for (bool again = true; again;) {
      again = false;
      for (size_t a = 0; a < actions.size(); ++a) {
        const Action& action = actions[a];
        Phase& phase = rank.phase[a];
        if (phase == Phase::kIdle &&
            (action.after < 0 || rank.phase[action.after] == Phase::kDone) &&
            (rank.earlierOnLink[a] < 0 || rank.phase[rank.earlierOnLink[a]] != Phase::kIdle)) {
          phase = post(r, action, &rank.seq[a]);
          again = *progressed = true;
        }
        if (phase != Phase::kPosted) continue;
        if (action.kind == ActionKind::kSend) {
          if (channel(r, action.peer).consumed > rank.seq[a]) {
            phase = Phase::kDone;
            again = *progressed = true;
          }
          continue;
        }
        Channel& in = channel(action.peer, r);
        if (in.queue.empty() || in.queue.front().seq != rank.seq[a]) continue;
        const std::vector<uint8_t>& data = in.queue.front().data;
        if (data.size() != action.dst.bytes) {
          return internalError("rank " + std::to_string(action.peer) + " sent " +
                               std::to_string(data.size()) + " bytes where " +
                               where(r, rank.step, a) + " expects " +
                               std::to_string(action.dst.bytes));
        }
        uint8_t* dst = resolve(r, action.dst);
        if (action.kind == ActionKind::kRecv) {
          if (!data.empty()) std::memcpy(dst, data.data(), data.size());
        } else {
          coll::reducerFor(args.type, args.op)(dst, resolve(r, action.src), data.data(),
                                               data.size() / typeSize(args.type));
        }
        in.queue.pop_front();
        ++in.consumed;
        phase = Phase::kDone;
        again = *progressed = true;
      }
    }
    return Status::ok();
  }

  // Starts `action`; local ones run to completion at once. Returns its new phase.
  Phase post(size_t r, const Action& action, size_t* seq) {
    const CollArgs& args = ranks_[r].args;
    switch (action.kind) {
      case ActionKind::kCopy: {
        uint8_t* dst = resolve(r, action.dst);
        uint8_t* src = resolve(r, action.src);
        if (dst != src && action.dst.bytes > 0) std::memmove(dst, src, action.dst.bytes);
        return Phase::kDone;
      }
      case ActionKind::kReduce: {
        uint8_t* dst = resolve(r, action.dst);
        coll::reducerFor(args.type, args.op)(dst, dst, resolve(r, action.src),
                                             action.dst.bytes / typeSize(args.type));
        return Phase::kDone;
      }
      case ActionKind::kDivide:
        coll::dividerFor(args.type)(resolve(r, action.dst), action.dst.bytes / typeSize(args.type),
                                    args.nranks);
        return Phase::kDone;
      case ActionKind::kSend: {
        // Snapshot now: the hazard check guarantees nothing rewrites the source this step.
        Channel& out = channel(r, action.peer);
        const uint8_t* src = resolve(r, action.src);
        *seq = out.posted++;
        out.queue.push_back({std::vector<uint8_t>(src, src + action.src.bytes), *seq});
        return buffering_ == Buffering::kEager ? Phase::kDone : Phase::kPosted;
      }
      case ActionKind::kRecv:
      case ActionKind::kRecvReduce:
        *seq = channel(action.peer, r).receivesPosted++;
        return Phase::kPosted;
    }
    return Phase::kDone;
  }

  Status deadlock(const std::vector<Progress>& ranks) {
    std::string report = "deadlock:";
    for (size_t r = 0; r < n_; ++r) {
      if (ranks[r].step == schedules_[r].steps.size()) continue;
      report +=
          " rank " + std::to_string(r) + " waits in step " + std::to_string(ranks[r].step) + " on";
      const std::vector<Action>& actions = schedules_[r].steps[ranks[r].step].actions;
      for (size_t a = 0; a < actions.size(); ++a) {
        if (ranks[r].phase[a] == Phase::kDone) continue;
        report += std::string(" ") + kindName(actions[a].kind) + "(" +
                  std::to_string(actions[a].peer) + ")";
      }
      report += ";";
    }
    return internalError(report);
  }

  std::vector<SimRank>& ranks_;
  const std::vector<Schedule>& schedules_;
  const Buffering buffering_;
  const size_t n_;
  std::vector<std::vector<uint8_t>> scratch_;
  std::vector<Buffers> buffers_;
  std::map<std::pair<size_t, size_t>, Channel> channels_;
};

}  // namespace

Status checkMatching(const std::vector<Schedule>& schedules) {
  const size_t n = schedules.size();
  // sizes[{from, to}] lists message sizes in schedule order, from each side.
  std::map<std::pair<size_t, size_t>, std::vector<size_t>> sent, received;
  for (size_t r = 0; r < n; ++r) {
    for (const coll::Step& step : schedules[r].steps) {
      for (const Action& action : step.actions) {
        if (action.peer < 0 || static_cast<size_t>(action.peer) >= n) continue;
        if (action.kind == ActionKind::kSend)
          sent[{r, action.peer}].push_back(messageBytes(action));
        if (isReceive(action.kind)) received[{action.peer, r}].push_back(messageBytes(action));
      }
    }
  }
  for (size_t from = 0; from < n; ++from) {
    for (size_t to = 0; to < n; ++to) {
      const std::vector<size_t>& s = sent[{from, to}];
      const std::vector<size_t>& v = received[{from, to}];
      for (size_t i = 0; i < std::max(s.size(), v.size()); ++i) {
        if (i >= s.size() || i >= v.size() || s[i] != v[i]) {
          auto show = [&](const std::vector<size_t>& list) {
            return i < list.size() ? std::to_string(list[i]) + " bytes" : std::string("nothing");
          };
          return internalError("message #" + std::to_string(i) + " from rank " +
                               std::to_string(from) + " to rank " + std::to_string(to) +
                               ": sender posts " + show(s) + ", receiver expects " + show(v));
        }
      }
    }
  }
  return Status::ok();
}

Status runSchedules(std::vector<SimRank>& ranks, const std::vector<Schedule>& schedules,
                    Buffering buffering) {
  if (ranks.size() != schedules.size()) return internalError("one schedule per rank is needed");
  Simulation simulation(ranks, schedules, buffering);
  BRAID_RETURN_IF_ERROR(simulation.validate());
  return simulation.run();
}

Status simulateCollective(std::vector<SimRank>& ranks, const std::string& algorithm,
                          Buffering buffering, std::vector<Schedule>* built) {
  std::vector<Schedule> schedules;
  for (SimRank& rank : ranks) {
    Result<Schedule> schedule = coll::buildSchedule(rank.args, algorithm);
    if (!schedule.isOk()) return schedule.status();
    schedules.push_back(std::move(schedule.value()));
  }
  Status status = runSchedules(ranks, schedules, buffering);
  if (built != nullptr) *built = std::move(schedules);
  return status;
}

}  // namespace braid::testing
