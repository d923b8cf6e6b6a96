#include "comm/engine.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "collectives/algorithm.h"
#include "collectives/host/schedule_runner.h"
#include "comm/argument_check.h"
#include "comm/call_failure.h"
#include "comm/comm.h"
#include "comm/core_spreading.h"
#include "comm/poll_until_done.h"
#include "core/log.h"
#include "core/types.h"

namespace braid {
namespace {

using coll::ScheduleRunner;

// What one communicator is running now: one collective, or a batch of sends/recvs.
struct Stage {
  // Shared with the communicator's schedule cache; runners point into them.
  std::vector<std::shared_ptr<const coll::Schedule>> schedules;
  std::vector<std::unique_ptr<ScheduleRunner>> runners;
  // BRAID_CHECK: this stage exchanges signatures; `checked` runs once they match.
  const Op* checked = nullptr;
  CallSignature mine;
  std::vector<CallSignature> all;  // one per rank
};

class CommWork {
 public:
  explicit CommWork(Comm* comm) : comm_(comm) {}
  Comm* comm() const { return comm_; }
  void add(const Op* op) { ops_.push_back(op); }
  bool done() const { return next_ >= ops_.size() && stage_ == nullptr; }

  Status advance(bool* progressed) {
    while (!done()) {
      if (stage_ == nullptr) {
        BRAID_RETURN_IF_ERROR(buildStage());
        *progressed = true;
        if (stage_ == nullptr) continue;  // an empty op completed at once
      }
      bool stageDone = true;
      for (auto& r : stage_->runners) {
        BRAID_RETURN_IF_ERROR(r->progress(progressed));
        stageDone &= r->done();
      }
      if (!stageDone) return Status::ok();
      comm_->flightRecorder().end(Status::ok());
      std::unique_ptr<Stage> finished = std::move(stage_);
      if (finished->checked != nullptr) {
        BRAID_RETURN_IF_ERROR(compareSignatures(finished->all));
        if (!movesNothing(*finished->checked))
          BRAID_RETURN_IF_ERROR(buildCollective(*finished->checked));
      }
    }
    return Status::ok();
  }

  std::string describePending() const {
    if (stage_ == nullptr) return "nothing";
    for (auto& r : stage_->runners) {
      if (!r->done()) return r->describePending();
    }
    return "nothing";
  }

  /// The peer the current stage waits for: the first runner's unfinished
  /// receive's, else the first unfinished send's; -1 when none.
  int pendingPeer() const {
    if (stage_ == nullptr) return -1;
    int sendPeer = -1;
    for (auto& r : stage_->runners) {
      bool receiving = false;
      const int peer = r->pendingPeer(&receiving);
      if (receiving) return peer;
      if (sendPeer < 0) sendPeer = peer;
    }
    return sendPeer;
  }

  /// Lets the flight recorder see how far the current stage got.
  void snapshot() const {
    if (stage_ != nullptr) comm_->flightRecorder().snapshot(stage_->runners);
  }

  const char* currentApi() const {
    size_t i = next_ > 0 ? next_ - 1 : 0;
    return i < ops_.size() ? ops_[i]->apiName : "";
  }

 private:
  Status buildStage() {
    const Op& first = *ops_[next_];
    if (first.kind == OpKind::kCollective) {
      ++next_;
      if (comm_->checksCalls()) return buildCheck(first);
      if (movesNothing(first)) return Status::ok();
      return buildCollective(first);
    }
    size_t end = next_;
    while (end < ops_.size() && ops_[end]->kind != OpKind::kCollective) ++end;
    Status s = buildPointToPoint(next_, end);
    next_ = end;
    return s;
  }

  Status buildCheck(const Op& op) {
    auto stage = std::make_unique<Stage>();
    stage->checked = &op;
    stage->mine = signatureOf(op);
    stage->all.resize(comm_->nranks());
    coll::CollArgs gather;
    gather.kind = coll::CollKind::kAllGather;
    gather.count = sizeof(CallSignature);
    gather.type = braidUint8;
    gather.rank = comm_->rank();
    gather.nranks = comm_->nranks();
    gather.chunkBytes = comm_->config().chunkBytes;
    // The check's own exchange is always selected automatically, whatever the user forced.
    BRAID_ASSIGN_OR_RETURN(std::shared_ptr<const coll::Schedule> schedule,
                           comm_->schedules().get(gather, coll::Overrides{}));
    coll::Buffers b;
    b.send = reinterpret_cast<const uint8_t*>(&stage->mine);
    b.recv = reinterpret_cast<uint8_t*>(stage->all.data());
    b.sendBytes = sizeof(CallSignature);
    b.recvBytes = stage->all.size() * sizeof(CallSignature);
    b.scratchBytes = schedule->scratchBytes;
    b.scratch = b.scratchBytes ? comm_->scratch(b.scratchBytes) : nullptr;
    stage->runners.push_back(std::make_unique<ScheduleRunner>(
        comm_->transport(), schedule.get(), b, braidUint8, braidSum, comm_->nranks()));
    stage->schedules.push_back(std::move(schedule));
    comm_->flightRecorder().begin(op, 1, true, stage->schedules);
    stage_ = std::move(stage);
    return Status::ok();
  }

  Status buildCollective(const Op& op) {
    auto stage = std::make_unique<Stage>();
    const coll::CollArgs args = toCollArgs(op);
    BRAID_ASSIGN_OR_RETURN(std::shared_ptr<const coll::Schedule> schedule,
                           comm_->schedules().get(args, comm_->overrides()));
    coll::Buffers b;
    b.send = static_cast<const uint8_t*>(op.send);
    b.recv = static_cast<uint8_t*>(op.recv);
    b.sendBytes = coll::sendBufferBytes(args);
    b.recvBytes = coll::recvBufferBytes(args);
    b.scratchBytes = schedule->scratchBytes;
    b.scratch = b.scratchBytes ? comm_->scratch(b.scratchBytes) : nullptr;
    stage->runners.push_back(std::make_unique<ScheduleRunner>(comm_->transport(), schedule.get(), b,
                                                              op.type, op.op, comm_->nranks()));
    stage->schedules.push_back(std::move(schedule));
    BRAID_TRACE("%s: %zu elements, %s, %zu steps", op.apiName, op.count,
                stage->schedules[0]->algorithm.c_str(), stage->schedules[0]->steps.size());
    comm_->flightRecorder().begin(op, 1, false, stage->schedules);
    stage_ = std::move(stage);
    return Status::ok();
  }

  // Sends and receives between ops_[begin, end): one runner each, posted in
  // call order; sends to self are matched with receives from self here.
  Status buildPointToPoint(size_t begin, size_t end) {
    auto stage = std::make_unique<Stage>();
    std::vector<const Op*> selfSends, selfRecvs;
    for (size_t i = begin; i < end; ++i) {
      const Op& op = *ops_[i];
      if (op.peer == comm_->rank()) {
        (op.kind == OpKind::kSend ? selfSends : selfRecvs).push_back(&op);
        continue;
      }
      const size_t bytes = op.count * typeSize(op.type);
      coll::Action a;
      a.peer = op.peer;
      a.kind = op.kind == OpKind::kSend ? coll::ActionKind::kSend : coll::ActionKind::kRecv;
      (op.kind == OpKind::kSend ? a.src : a.dst) = {
          op.kind == OpKind::kSend ? coll::BufferId::kSend : coll::BufferId::kRecv, 0, bytes};
      auto s = std::make_shared<coll::Schedule>();
      s->algorithm = op.kind == OpKind::kSend ? "send" : "recv";
      s->steps.push_back(coll::Step{{a}});
      stage->schedules.push_back(std::move(s));
      coll::Buffers b;
      b.send = static_cast<const uint8_t*>(op.send);
      b.recv = static_cast<uint8_t*>(op.recv);
      b.sendBytes = op.kind == OpKind::kSend ? bytes : 0;
      b.recvBytes = op.kind == OpKind::kRecv ? bytes : 0;
      stage->runners.push_back(std::make_unique<ScheduleRunner>(
          comm_->transport(), stage->schedules.back().get(), b, op.type, op.op, comm_->nranks()));
    }
    BRAID_RETURN_IF_ERROR(matchSelf(selfSends, selfRecvs));
    if (stage->runners.empty()) return Status::ok();
    comm_->flightRecorder().begin(*ops_[begin], static_cast<int>(end - begin), false,
                                  stage->schedules);
    stage_ = std::move(stage);
    return Status::ok();
  }

  Status matchSelf(const std::vector<const Op*>& sends, const std::vector<const Op*>& recvs) {
    if (sends.size() != recvs.size()) {
      return invalidUsage("rank " + std::to_string(comm_->rank()) + " has " +
                          std::to_string(sends.size()) + " sends to itself but " +
                          std::to_string(recvs.size()) + " receives from itself in one group");
    }
    for (size_t i = 0; i < sends.size(); ++i) {
      size_t sb = sends[i]->count * typeSize(sends[i]->type);
      size_t rb = recvs[i]->count * typeSize(recvs[i]->type);
      if (sb != rb) {
        return invalidUsage("a send to self of " + std::to_string(sb) +
                            " bytes meets a receive of " + std::to_string(rb) + " bytes");
      }
      if (sb > 0 && sends[i]->send != recvs[i]->recv)
        std::memmove(recvs[i]->recv, sends[i]->send, sb);
    }
    return Status::ok();
  }

  Comm* const comm_;  // owned by the application, which may not destroy it mid-call
  std::vector<const Op*> ops_;
  size_t next_ = 0;
  std::unique_ptr<Stage> stage_;
};

// Marks every communicator failed and prints its flight recorder (BRAID_DEBUG=WARN).
void failAll(std::vector<CommWork>& works, const Status& error) {
  for (auto& w : works) {
    w.snapshot();
    markCallFailed(*w.comm(), error);
  }
}

// The works of one call as a task (comm/task.h): each communicator's stages
// advance side by side. Stages record their own begin in the flight recorder.
class GroupTask {
 public:
  explicit GroupTask(std::vector<CommWork>& works) : works_(works) {}

  Status post() { return Status::ok(); }  // a stage posts at its first advance

  Status progress(bool* progressed) {
    for (size_t i = 0; i < works_.size(); ++i) {
      CommWork& w = works_[i];
      if (w.done()) continue;
      Status s = w.advance(progressed);
      if (!s.isOk()) {
        at_ = i;  // the error names this communicator's call
        return s;
      }
    }
    at_ = 0;
    while (at_ + 1 < works_.size() && works_[at_].done()) ++at_;
    return Status::ok();
  }

  bool done() const {
    return std::all_of(works_.begin(), works_.end(), [](const CommWork& w) { return w.done(); });
  }
  Comm& waitingOn() { return *works_[at_].comm(); }
  const char* api() const { return works_[at_].currentApi(); }
  Comm* aborted() {
    for (auto& w : works_) {
      if (!w.done() && w.comm()->abortRequested()) return w.comm();
    }
    return nullptr;
  }
  int pendingPeer() const { return works_[at_].pendingPeer(); }
  std::string describePending() const { return works_[at_].describePending(); }
  void recordBegin() {}
  void recordSnapshot() {
    for (auto& w : works_) w.snapshot();
  }

  WaitPolicy waitPolicy() const {
    double timeout = works_[0].comm()->config().timeoutSeconds;
    for (auto& w : works_) timeout = std::min(timeout, w.comm()->config().timeoutSeconds);
    // With several communicators, sleep only briefly: one transport cannot hear another's
    // peers.
    return {timeout, works_[0].comm()->spinRounds(), works_.size() == 1 ? 100 : 1};
  }

 private:
  std::vector<CommWork>& works_;
  size_t at_ = 0;  // the work waited on: the first not done, or the one that failed
};

}  // namespace

Status runOps(std::span<const Op> ops) {
  if (ops.empty()) return Status::ok();
  // The calls were checked when made (validate, Comm::usable); a communicator may have
  // failed since (a group's calls run at its end, the device proxy's later still).
  for (const Op& op : ops) BRAID_RETURN_IF_ERROR(op.comm->health());
  // Sends and receives alone on one communicator: its cheaper task, the same messages.
  DirectPointToPoint& p2p = ops.front().comm->pointToPoint();
  if (p2p.supports(ops)) return p2p.run(ops);
  std::vector<CommWork> works;
  // Per communicator, sends and receives run before the collectives (which
  // keep their call order). Every rank applies the same rule, so on each
  // connector the point-to-point messages of a group precede its collective
  // traffic on both ends, whatever order the calls were made in.
  std::vector<const Op*> ordered;
  for (const Op& op : ops) {
    if (op.kind != OpKind::kCollective) ordered.push_back(&op);
  }
  for (const Op& op : ops) {
    if (op.kind == OpKind::kCollective) ordered.push_back(&op);
  }
  for (const Op* opp : ordered) {
    const Op& op = *opp;
    CommWork* w = nullptr;
    for (auto& existing : works) {
      if (existing.comm() == op.comm) w = &existing;
    }
    if (w == nullptr) w = &works.emplace_back(op.comm);
    w->add(&op);
  }
  size_t largest = 0;  // bytes of the largest buffer in the group: it sets the placement
  for (const Op* op : ordered) {
    const BufferBytes bytes = bufferBytes(*op);
    largest = std::max({largest, bytes.send, bytes.recv});
  }
  // Only communicators of one rank per process pin (several ranks as threads
  // of this process must not all land on one CPU).
  if (std::all_of(works.begin(), works.end(),
                  [](const CommWork& w) { return w.comm()->placesRanks(); })) {
    placeForCall(largest);
  }
  for (auto& w : works) w.comm()->enter();
  GroupTask task(works);
  const Status s = pollUntilDone(task);
  if (!s.isOk()) failAll(works, s);
  for (auto& w : works) w.comm()->leave();
  return s;
}

}  // namespace braid
