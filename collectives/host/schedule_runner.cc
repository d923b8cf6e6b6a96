#include "collectives/host/schedule_runner.h"

#include <algorithm>
#include <cstring>

#include "core/kernels/copy.h"
#include "core/types.h"

namespace braid::coll {

ScheduleRunner::ScheduleRunner(transport::Transport* transport, const Schedule* schedule,
                               Buffers buffers, braidDataType_t type, braidRedOp_t op, int nranks)
    : transport_(transport),
      schedule_(schedule),
      buffers_(buffers),
      elemSize_(typeSize(type)),
      reduce_(reducerFor(type, op)),
      reduceStreaming_(reducerFor(type, op, /*streaming=*/true)),
      divide_(dividerFor(type)),
      nranks_(nranks),
      streamStoreBytes_(transport != nullptr ? transport->streamStoreBytes() : 0),
      postsAhead_(transport != nullptr && transport->postsAhead()) {}

size_t ScheduleRunner::bufferBytes(BufferId id) const {
  switch (id) {
    case BufferId::kSend:
      return buffers_.sendBytes;
    case BufferId::kRecv:
      return buffers_.recvBytes;
    case BufferId::kScratch:
      return buffers_.scratchBytes;
  }
  return 0;
}

Result<uint8_t*> ScheduleRunner::resolve(const Span& span, bool writable) const {
  uint8_t* base = nullptr;
  size_t size = 0;
  switch (span.buf) {
    case BufferId::kSend:
      if (writable) return internalError("schedule writes into the send buffer");
      base = const_cast<uint8_t*>(buffers_.send);
      size = buffers_.sendBytes;
      break;
    case BufferId::kRecv:
      base = buffers_.recv;
      size = buffers_.recvBytes;
      break;
    case BufferId::kScratch:
      base = buffers_.scratch;
      size = buffers_.scratchBytes;
      break;
  }
  if (span.offset + span.bytes > size || (base == nullptr && span.bytes > 0)) {
    return internalError("schedule '" + schedule_->algorithm + "' step " + std::to_string(step_) +
                         " touches bytes [" + std::to_string(span.offset) + ", " +
                         std::to_string(span.offset + span.bytes) + ") of a " +
                         std::to_string(size) + "-byte buffer");
  }
  return base == nullptr ? nullptr : base + span.offset;
}

Status ScheduleRunner::enterStep() {
  const Step& step = schedule_->steps[step_];
  const bool adopted = ahead_;
  waiting_.clear();  // keeps the capacity: a restarted runner allocates nothing
  if (adopted) {
    // Every action of this step is a transfer, posted ahead: swapping keeps each
    // request where its connector points (the previous step's are all done).
    requests_.swap(aheadRequests_);
    ahead_ = false;
  } else {
    requests_.assign(step.actions.size(), transport::Request{});
    for (size_t i = 0; i < step.actions.size(); ++i) waiting_.push_back(static_cast<uint32_t>(i));
  }
  entered_ = true;
  BRAID_RETURN_IF_ERROR(buildLanes());
  if (adopted) {
    for (size_t p = 0; p < peersUsed_; ++p) {
      for (Lane& lane : peers_[p].lanes) lane.started = lane.actions.size();
    }
  }
  bool ignored = false;
  return startReady(&ignored);
}

bool ScheduleRunner::touched(const Action& a, std::vector<Range>* reads,
                             std::vector<Range>* writes) const {
  auto add = [&](const Span& span, std::vector<Range>* to) {
    if (span.bytes == 0) return true;
    Result<uint8_t*> p = resolve(span, false);
    if (!p.isOk() || *p == nullptr) return false;
    to->push_back(Range{*p, *p + span.bytes});
    return true;
  };
  switch (a.kind) {
    case ActionKind::kSend:
      return add(a.src, reads);
    case ActionKind::kRecv:
    case ActionKind::kDivide:
      return add(a.dst, writes);
    case ActionKind::kRecvReduce:
    case ActionKind::kCopy:
    case ActionKind::kReduce:
      return add(a.src, reads) && add(a.dst, writes);
  }
  return false;
}

bool ScheduleRunner::postAheadSafe(size_t next) const {
  const Step& current = schedule_->steps[next - 1];
  const Step& step = schedule_->steps[next];
  if (current.actions.size() > kMaxAheadActions || step.actions.size() > kMaxAheadActions) {
    return false;
  }
  std::vector<Range> curReads, curWrites, reads, writes;
  for (const Action& a : current.actions) {
    if (!touched(a, &curReads, &curWrites)) return false;
  }
  for (const Action& a : step.actions) {
    // Local actions and ordered ones start only when their step is entered.
    if (!isTransfer(a) || a.peer >= nranks_ || a.after >= 0 || a.block) return false;
    if (!touched(a, &reads, &writes)) return false;
  }
  auto overlap = [](const std::vector<Range>& x, const std::vector<Range>& y) {
    for (const Range& a : x) {
      for (const Range& b : y) {
        if (a.begin < b.end && b.begin < a.end) return true;
      }
    }
    return false;
  };
  return !overlap(curWrites, reads) && !overlap(curWrites, writes) && !overlap(curReads, writes);
}

Status ScheduleRunner::postAhead(bool* progressed) {
  const size_t next = step_ + 1;
  if (!postsAhead_ || ahead_ || !waiting_.empty() || next >= schedule_->steps.size() ||
      aheadRefused_ == next) {
    return Status::ok();
  }
  if (!postAheadSafe(next)) {
    aheadRefused_ = next;
    return Status::ok();
  }
  // In action order, behind every transfer of the current step: the FIFO rule holds.
  const Step& step = schedule_->steps[next];
  aheadRequests_.assign(step.actions.size(), transport::Request{});
  aheadPeers_.clear();
  ahead_ = true;  // even if a post fails: the step's requests are aheadRequests_ now
  for (size_t i = 0; i < step.actions.size(); ++i) {
    const Action& a = step.actions[i];
    BRAID_RETURN_IF_ERROR(postTransfer(a, &aheadRequests_[i]));
    if (std::find(aheadPeers_.begin(), aheadPeers_.end(), a.peer) == aheadPeers_.end()) {
      aheadPeers_.push_back(a.peer);
    }
  }
  *progressed = true;
  return Status::ok();
}

Status ScheduleRunner::buildLanes() {
  if (peerSlot_.size() != static_cast<size_t>(nranks_)) peerSlot_.assign(nranks_, -1);
  for (size_t p = 0; p < peersUsed_; ++p) peerSlot_[peers_[p].peer] = -1;
  peersUsed_ = 0;
  const Step& step = schedule_->steps[step_];
  laneIndex_.assign(step.actions.size(), -1);
  for (size_t i = 0; i < step.actions.size(); ++i) {
    const Action& a = step.actions[i];
    if (!isTransfer(a)) continue;
    if (a.peer >= nranks_) {
      return internalError("schedule '" + schedule_->algorithm + "' step " + std::to_string(step_) +
                           " names peer " + std::to_string(a.peer) + " of a " +
                           std::to_string(nranks_) + "-rank communicator");
    }
    int& slot = peerSlot_[a.peer];
    if (slot < 0) {
      if (peers_.size() == peersUsed_) peers_.emplace_back();
      PeerLanes& added = peers_[peersUsed_];
      added.peer = a.peer;
      for (Lane& lane : added.lanes) {
        lane.actions.clear();  // keeps the capacity: steps repeat with the same shape
        lane.started = 0;
        lane.doneUpTo = 0;
      }
      slot = static_cast<int>(peersUsed_++);
    }
    const int direction = a.kind == ActionKind::kSend ? 1 : 0;
    peers_[slot].lanes[direction].actions.push_back(static_cast<uint32_t>(i));
    laneIndex_[i] = slot * 2 + direction;
  }
  return Status::ok();
}

bool ScheduleRunner::Lane::inFlight(const std::vector<transport::Request>& requests) {
  // Requests of one lane may finish out of order (a connector may complete a
  // later small send before an earlier large one), so the cursor only skips
  // what is done; a finished request behind an unfinished one is passed later.
  while (doneUpTo < started && requests[actions[doneUpTo]].done) ++doneUpTo;
  return doneUpTo < started;
}

int ScheduleRunner::pendingPeer(bool* receiving) const {
  *receiving = false;
  if (done()) return -1;
  const Step& step = schedule_->steps[step_];
  int sendPeer = -1;
  for (size_t i = 0; i < step.actions.size(); ++i) {
    const Action& a = step.actions[i];
    if (!isTransfer(a)) continue;
    const bool send = a.kind == ActionKind::kSend;
    if (movedBytes(i) >= (send ? a.src.bytes : a.dst.bytes)) continue;
    if (!send) {
      *receiving = true;
      return a.peer;
    }
    if (sendPeer < 0) sendPeer = a.peer;
  }
  return sendPeer;
}

Status ScheduleRunner::startReady(bool* progressed) {
  // One pass over the actions not started yet, in action order; those that
  // still wait are kept (in order) for the next pass.
  size_t kept = 0;
  for (size_t k = 0; k < waiting_.size(); ++k) {
    const uint32_t i = waiting_[k];
    if (!canStart(i)) {
      waiting_[kept++] = i;
      continue;
    }
    BRAID_RETURN_IF_ERROR(start(i, progressed));
    *progressed = true;
  }
  waiting_.resize(kept);
  return Status::ok();
}

Status ScheduleRunner::pumpConnectors(bool* progressed) {
  for (size_t p = 0; p < peersUsed_; ++p) {
    PeerLanes& peer = peers_[p];
    const bool receiving = peer.lanes[0].inFlight(requests_);
    const bool sending = peer.lanes[1].inFlight(requests_);
    if (!receiving && !sending) continue;
    bool moved = false;  // a connector reports its own moves only
    BRAID_RETURN_IF_ERROR(transport_->connector(peer.peer)->progress(&moved));
    *progressed |= moved;
  }
  if (!ahead_) return Status::ok();
  // The next step's transfers move too; a peer pumped above is not pumped twice.
  for (int peer : aheadPeers_) {
    const int slot = peerSlot_[peer];
    if (slot >= 0 && (peers_[slot].lanes[0].doneUpTo < peers_[slot].lanes[0].started ||
                      peers_[slot].lanes[1].doneUpTo < peers_[slot].lanes[1].started)) {
      continue;
    }
    bool moved = false;
    BRAID_RETURN_IF_ERROR(transport_->connector(peer)->progress(&moved));
    *progressed |= moved;
  }
  return Status::ok();
}

Status ScheduleRunner::copyLocal(uint8_t* dst, const uint8_t* src, size_t n, bool streaming,
                                 bool* progressed) {
  for (size_t done = 0; done < n; done += kCopyPieceBytes) {
    const size_t bytes = std::min(kCopyPieceBytes, n - done);
    if (done > 0) BRAID_RETURN_IF_ERROR(pumpConnectors(progressed));
    if (streaming) {
      copyStreaming(dst + done, src + done, bytes);
    } else {
      std::memcpy(dst + done, src + done, bytes);
    }
  }
  return Status::ok();
}

Status ScheduleRunner::start(size_t index, bool* progressed) {
  const Action& a = schedule_->steps[step_].actions[index];
  transport::Request& req = requests_[index];
  if (laneIndex_[index] >= 0) ++laneOf(index).started;
  switch (a.kind) {
    case ActionKind::kSend:
    case ActionKind::kRecv:
    case ActionKind::kRecvReduce:
      return postTransfer(a, &req);
    case ActionKind::kCopy: {
      BRAID_ASSIGN_OR_RETURN(uint8_t * src, resolve(a.src, false));
      BRAID_ASSIGN_OR_RETURN(uint8_t * dst, resolve(a.dst, true));
      if (a.src.bytes != a.dst.bytes) {
        return invalidUsage("schedule '" + schedule_->algorithm + "' step " +
                            std::to_string(step_) + " copies " + std::to_string(a.src.bytes) +
                            " bytes into a span of " + std::to_string(a.dst.bytes) +
                            " bytes (for all-to-all-v: this rank's send and receive counts for "
                            "itself differ)");
      }
      const size_t n = a.dst.bytes;
      const bool apart = dst + n <= src || src + n <= dst;
      if (apart && n > 0) {
        // A destination far larger than the cache: skip its reads.
        const bool streaming =
            streamStoreBytes_ != 0 && bufferBytes(a.dst.buf) >= streamStoreBytes_;
        BRAID_RETURN_IF_ERROR(copyLocal(dst, src, n, streaming, progressed));
      } else if (src != dst && n > 0) {
        std::memmove(dst, src, n);
      }
      req.done = true;
      return Status::ok();
    }
    case ActionKind::kReduce: {
      BRAID_ASSIGN_OR_RETURN(uint8_t * src, resolve(a.src, false));
      BRAID_ASSIGN_OR_RETURN(uint8_t * dst, resolve(a.dst, true));
      if (a.src.bytes != a.dst.bytes) {
        return internalError("schedule '" + schedule_->algorithm + "' step " +
                             std::to_string(step_) + " reduces spans of different sizes");
      }
      if (a.dst.bytes > 0) reduce_(dst, dst, src, a.dst.bytes / elemSize_);
      req.done = true;
      return Status::ok();
    }
    case ActionKind::kDivide: {
      BRAID_ASSIGN_OR_RETURN(uint8_t * dst, resolve(a.dst, true));
      if (a.dst.bytes > 0) divide_(dst, a.dst.bytes / elemSize_, nranks_);
      req.done = true;
      return Status::ok();
    }
  }
  return internalError("unknown action kind");
}

Status ScheduleRunner::postTransfer(const Action& a, transport::Request* req) {
  if (a.kind == ActionKind::kSend) {
    BRAID_ASSIGN_OR_RETURN(uint8_t * src, resolve(a.src, false));
    transport::Connector* connector = transport_->connector(a.peer);
    if (a.block) return connector->postBlockSend(src, a.src.bytes, bufferBytes(a.src.buf), req);
    return connector->postSend(src, a.src.bytes, req);
  }
  transport::RecvSink sink;
  BRAID_ASSIGN_OR_RETURN(sink.dst, resolve(a.dst, true));
  sink.elemSize = elemSize_;
  sink.extentBytes = bufferBytes(a.dst.buf);
  if (a.kind == ActionKind::kRecvReduce) {
    BRAID_ASSIGN_OR_RETURN(uint8_t * accum, resolve(a.src, false));
    sink.accum = accum;
    // A destination far larger than the cache: skip its reads, as local copies do.
    const bool streaming = streamStoreBytes_ != 0 && sink.extentBytes >= streamStoreBytes_;
    sink.reduce = streaming ? reduceStreaming_ : reduce_;
  }
  return transport_->connector(a.peer)->postRecv(sink, a.dst.bytes, req);
}

Status ScheduleRunner::progress(bool* progressed) {
  while (!done()) {
    if (!entered_) BRAID_RETURN_IF_ERROR(enterStep());
    // Pump each connector this step waits on once per call.
    BRAID_RETURN_IF_ERROR(pumpConnectors(progressed));
    if (!waiting_.empty()) BRAID_RETURN_IF_ERROR(startReady(progressed));
    if (postsAhead_) BRAID_RETURN_IF_ERROR(postAhead(progressed));
    bool allDone = waiting_.empty();  // local actions finish as they start
    for (size_t p = 0; allDone && p < peersUsed_; ++p) {
      for (Lane& lane : peers_[p].lanes) {
        lane.inFlight(requests_);
        allDone &= lane.doneUpTo == lane.actions.size();
      }
    }
    if (!allDone) return Status::ok();
    ++step_;
    entered_ = false;
    *progressed = true;
  }
  return Status::ok();
}

std::string ScheduleRunner::describePending() const {
  if (done()) return "nothing";
  std::string out = schedule_->algorithm + " step " + std::to_string(step_ + 1) + "/" +
                    std::to_string(schedule_->steps.size());
  const Step& step = schedule_->steps[step_];
  for (size_t i = 0; i < step.actions.size() && i < requests_.size(); ++i) {
    const Action& a = step.actions[i];
    if (requests_[i].done || a.peer < 0) continue;
    out += a.kind == ActionKind::kSend ? ", send to rank " : ", recv from rank ";
    out += std::to_string(a.peer) + " (" + std::to_string(requests_[i].completed) + "/" +
           std::to_string(requests_[i].bytes) + " bytes)";
  }
  return out;
}

}  // namespace braid::coll
