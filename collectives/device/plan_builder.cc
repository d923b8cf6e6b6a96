// Schedule -> DevicePlan. Three passes:
//   1. flatten: one PlanOp per Action, spans checked against the buffer sizes;
//   2. fuse (optional): a kRecv / kRecvReduce / kCopy X in step k whose destination is
//      exactly the source of the first send Y to peer q in step k + 1 becomes one op that
//      also forwards to q, and Y disappears. Allowed only when (a) nothing in step k waits on
//      X and X waits on nothing, nothing in step k + 1 waits on Y; (b) step k sends nothing
//      to q after X (in action order), so q still receives our messages in schedule order —
//      the executor holds X's send part back until the step's earlier sends to q are done,
//      while X's receive part goes ahead, so fusing never makes a receive wait; (c) steps k and k +
//      1 talk to no peer but X's source and q, so moving the send one step earlier cannot tie this
//      rank's progress to a third rank (rings and chains meet this; trees need not); (d) X was not
//      fused already. A fused op receives and forwards slice by slice, which is how a ring
//      reduce-scatter becomes recvReduceCopySend and an all-gather recvCopySend.
//   3. split check: see DevicePlan::splittable.
#include "collectives/device/plan_builder.h"

#include <string>

namespace braid::device {
namespace {

using coll::Action;
using coll::ActionKind;
using coll::BufferId;
using coll::Schedule;
using coll::Span;

uint8_t planBuffer(BufferId id) {
  switch (id) {
    case BufferId::kSend:
      return kPlanSend;
    case BufferId::kRecv:
      return kPlanRecv;
    case BufferId::kScratch:
      return kPlanScratch;
  }
  return kPlanNone;
}

Status checkSpan(const Span& span, const PlanBufferSizes& sizes, size_t elemSize, size_t step) {
  const size_t size = span.buf == BufferId::kSend   ? sizes.sendBytes
                      : span.buf == BufferId::kRecv ? sizes.recvBytes
                                                    : sizes.scratchBytes;
  if (span.offset > size || span.bytes > size - span.offset) {
    return internalError("device plan: step " + std::to_string(step) + " touches bytes [" +
                         std::to_string(span.offset) + ", " +
                         std::to_string(span.offset + span.bytes) + ") of a " +
                         std::to_string(size) + "-byte buffer");
  }
  if (span.bytes % elemSize != 0 || span.offset % elemSize != 0) {
    return internalError("device plan: step " + std::to_string(step) +
                         " moves a span that is not whole elements");
  }
  return Status::ok();
}

Result<PlanOp> flattenAction(const Action& a, const PlanBufferSizes& sizes, size_t elemSize,
                             size_t step) {
  PlanOp op;
  op.after = static_cast<int8_t>(a.after);
  switch (a.kind) {
    case ActionKind::kSend:
      op.kind = PlanOpKind::kSend;
      op.sendPeer = a.peer;
      break;
    case ActionKind::kRecv:
      op.kind = PlanOpKind::kRecv;
      op.recvPeer = a.peer;
      break;
    case ActionKind::kRecvReduce:
      op.kind = PlanOpKind::kRecvReduce;
      op.recvPeer = a.peer;
      break;
    case ActionKind::kCopy:
      op.kind = PlanOpKind::kCopy;
      break;
    case ActionKind::kDivide:
      op.kind = PlanOpKind::kDivide;
      break;
    case ActionKind::kReduce:  // only the host's exchange all-reduce writes it
      return invalidUsage("device plan: step " + std::to_string(step) +
                          " has a local reduce, which only the host executor runs");
  }
  const bool readsSrc = a.kind == ActionKind::kSend || a.kind == ActionKind::kRecvReduce ||
                        a.kind == ActionKind::kCopy;  // kReduce was refused above
  const bool writesDst = a.kind != ActionKind::kSend;
  if (readsSrc) {
    BRAID_RETURN_IF_ERROR(checkSpan(a.src, sizes, elemSize, step));
    op.srcBuf = planBuffer(a.src.buf);
    op.srcOffset = a.src.offset;
    op.bytes = a.src.bytes;
  }
  if (writesDst) {
    BRAID_RETURN_IF_ERROR(checkSpan(a.dst, sizes, elemSize, step));
    op.dstBuf = planBuffer(a.dst.buf);
    op.dstOffset = a.dst.offset;
    op.bytes = a.dst.bytes;
  }
  if (readsSrc && writesDst && a.src.bytes != a.dst.bytes) {
    return internalError("device plan: step " + std::to_string(step) +
                         " has source and destination of different sizes");
  }
  return op;
}

// Send and recv name one memory when in place.
uint8_t memoryOf(uint8_t buf, bool inPlace) {
  return inPlace && buf == kPlanSend ? uint8_t(kPlanRecv) : buf;
}

bool overlaps(uint8_t bufA, uint64_t offA, uint64_t bytesA, uint8_t bufB, uint64_t offB,
              uint64_t bytesB) {
  return bufA == bufB && offA < offB + bytesB && offB < offA + bytesA;
}

Status checkCopy(const PlanOp& op, bool inPlace, size_t step) {
  if (op.kind != PlanOpKind::kCopy || op.bytes == 0) return Status::ok();
  const uint8_t s = memoryOf(op.srcBuf, inPlace), d = memoryOf(op.dstBuf, inPlace);
  if (overlaps(s, op.srcOffset, op.bytes, d, op.dstOffset, op.bytes) &&
      op.srcOffset != op.dstOffset) {
    return internalError("device plan: step " + std::to_string(step) +
                         " copies between partly overlapping spans");
  }
  return Status::ok();
}

bool touchesOnly(const std::vector<PlanOp>& step, int p, int q) {
  for (const PlanOp& op : step) {
    if (op.recvPeer >= 0 && op.recvPeer != p && op.recvPeer != q) return false;
    if (op.sendPeer >= 0 && op.sendPeer != p && op.sendPeer != q) return false;
  }
  return true;
}

bool hasDependent(const std::vector<PlanOp>& step, size_t index) {
  for (const PlanOp& op : step) {
    if (op.after == static_cast<int>(index)) return true;
  }
  return false;
}

// Tries to merge step[k][x] with a send of step[k + 1]; true when it did.
bool fuseOne(std::vector<std::vector<PlanOp>>& steps, size_t k, size_t x) {
  PlanOp& X = steps[k][x];
  if (X.kind != PlanOpKind::kRecv && X.kind != PlanOpKind::kRecvReduce &&
      X.kind != PlanOpKind::kCopy) {
    return false;
  }
  if (X.after >= 0 || hasDependent(steps[k], x) || X.bytes == 0) return false;
  std::vector<PlanOp>& next = steps[k + 1];
  for (size_t y = 0; y < next.size(); ++y) {
    const PlanOp& Y = next[y];
    if (Y.kind != PlanOpKind::kSend) continue;
    const int q = Y.sendPeer;
    // Only the first send to q in step k + 1 may move ahead of the others.
    bool earlierToQ = false;
    for (size_t j = 0; j < y; ++j) earlierToQ |= next[j].sendPeer == q;
    if (earlierToQ) continue;
    if (Y.srcBuf != X.dstBuf || Y.srcOffset != X.dstOffset || Y.bytes != X.bytes) continue;
    if (Y.after >= 0 || hasDependent(next, y)) continue;
    bool laterSendToQ = false;
    for (size_t j = x + 1; j < steps[k].size(); ++j) laterSendToQ |= steps[k][j].sendPeer == q;
    if (laterSendToQ) continue;
    const int p = X.recvPeer >= 0 ? X.recvPeer : q;
    if (!touchesOnly(steps[k], p, q) || !touchesOnly(next, p, q)) continue;
    X.kind = X.kind == PlanOpKind::kRecv         ? PlanOpKind::kRecvCopySend
             : X.kind == PlanOpKind::kRecvReduce ? PlanOpKind::kRecvReduceCopySend
                                                 : PlanOpKind::kCopySend;
    X.sendPeer = q;
    next.erase(next.begin() + static_cast<long>(y));
    for (PlanOp& op : next) {
      if (op.after > static_cast<int>(y)) --op.after;
    }
    return true;
  }
  return false;
}

bool writesDst(const PlanOp& op) { return op.kind != PlanOpKind::kSend; }
bool readsSrc(const PlanOp& op) {
  return op.kind != PlanOpKind::kRecv && op.kind != PlanOpKind::kRecvCopySend &&
         op.kind != PlanOpKind::kDivide;
}

// True when every region read (or divided) was written before only as exactly that region.
bool channelSplittable(const std::vector<PlanOp>& ops, bool inPlace) {
  constexpr size_t kMaxChecked = 4096;  // quadratic check; larger plans run on one channel
  if (ops.size() > kMaxChecked) return false;
  struct Region {
    uint8_t buf;
    uint64_t offset, bytes;
  };
  std::vector<Region> written;
  auto readOk = [&](uint8_t buf, uint64_t offset, uint64_t bytes) {
    for (const Region& w : written) {
      if (overlaps(w.buf, w.offset, w.bytes, buf, offset, bytes) &&
          (w.offset != offset || w.bytes != bytes)) {
        return false;
      }
    }
    return true;
  };
  for (const PlanOp& op : ops) {
    if (op.bytes == 0) continue;
    const uint8_t src = memoryOf(op.srcBuf, inPlace), dst = memoryOf(op.dstBuf, inPlace);
    if (readsSrc(op) && !readOk(src, op.srcOffset, op.bytes)) return false;
    if (op.kind == PlanOpKind::kDivide && !readOk(dst, op.dstOffset, op.bytes)) return false;
    if (writesDst(op)) {
      if (!readOk(dst, op.dstOffset, op.bytes)) return false;  // write after write, too
      written.push_back(Region{dst, op.dstOffset, op.bytes});
    }
  }
  return true;
}

}  // namespace

Result<DevicePlan> buildDevicePlan(const Schedule& schedule, const PlanBufferSizes& sizes,
                                   size_t elemSize, bool fuse) {
  std::vector<std::vector<PlanOp>> steps(schedule.steps.size());
  for (size_t s = 0; s < schedule.steps.size(); ++s) {
    const auto& actions = schedule.steps[s].actions;
    if (actions.size() > static_cast<size_t>(kMaxStepOps)) {
      return internalError("device plan: step " + std::to_string(s) + " has " +
                           std::to_string(actions.size()) + " actions, more than " +
                           std::to_string(kMaxStepOps));
    }
    for (const Action& a : actions) {
      BRAID_ASSIGN_OR_RETURN(PlanOp op, flattenAction(a, sizes, elemSize, s));
      BRAID_RETURN_IF_ERROR(checkCopy(op, sizes.inPlace, s));
      steps[s].push_back(op);
    }
  }
  DevicePlan plan;
  if (fuse) {
    for (size_t k = 0; k + 1 < steps.size(); ++k) {
      for (size_t x = 0; x < steps[k].size(); ++x) plan.fusedOps += fuseOne(steps, k, x);
    }
  }
  plan.stepStarts.push_back(0);
  for (const auto& step : steps) {
    plan.ops.insert(plan.ops.end(), step.begin(), step.end());
    plan.stepStarts.push_back(static_cast<uint32_t>(plan.ops.size()));
  }
  plan.splittable = channelSplittable(plan.ops, sizes.inPlace);
  return plan;
}

}  // namespace braid::device
