// The device executor: one group (a CUDA thread block; a host thread in CPU tests) walks one
// channel of a device plan (plan.h), step by step, exactly as the host executor walks a
// Schedule, moving data through connector FIFOs with the primitives (primitives.h).
//
// Within a step the ops run concurrently: the group visits the unfinished ops round-robin
// and moves one slot's worth of whichever op can move (its input slot full and its output
// slot free), so a rank that sends to and receives from the same peers in one step never
// waits on itself whatever the FIFO depth. An op may start only when its `after` op is done
// and every earlier op of the step on the same peer and direction is done (connectors are
// FIFO, DESIGN.md §3). Local copies and divisions run whole when reached.
//
// Channels: with `channels` > 1 (only for plans marked splittable), channel c runs the
// element range [c*E/C, (c+1)*E/C) of every op, over its own FIFOs; both ends of a message
// compute the same split.
//
// Every thread of the group takes the same branches: decisions come from the leader through
// Group::agree / Group::any, and the step's progress lives in one StepTable per group that
// only the leader writes, between barriers (step_table.h). A step that makes no progress for
// SpinBudget polls returns kStalled instead of hanging (a dead peer or a mismatched schedule).
#pragma once

#include <cstddef>
#include <cstdint>

#include "braid.h"
#include "collectives/device/element_ops.h"
#include "collectives/device/fifo.h"
#include "collectives/device/pack.h"
#include "collectives/device/plan.h"
#include "collectives/device/primitives.h"
#include "collectives/device/step_table.h"

namespace braid::device {

enum ExecStatus : int { kExecOk = 0, kExecStalled = 1, kExecBadPlan = 2 };

struct ExecArgs {
  PlanView plan;
  const uint8_t* send = nullptr;
  uint8_t* recv = nullptr;
  uint8_t* scratch = nullptr;
  braidRedOp_t op = braidSum;
  int nranks = 1;
  int channel = 0;
  int channels = 1;
  uint64_t spinLimit = uint64_t(1) << 26;
};

/// One op's share of this channel: its byte range after the channel split.
struct OpPart {
  const uint8_t* src;
  uint8_t* dst;
  uint64_t bytes;
};

template <class T>
BRAID_HD OpPart partOf(const PlanOp& op, const ExecArgs& a) {
  const uint64_t elements = op.bytes / sizeof(T);
  const uint64_t lo = elements * a.channel / a.channels;
  const uint64_t hi = elements * (a.channel + 1) / a.channels;
  auto base = [&](uint8_t buf) -> uint8_t* {
    switch (buf) {
      case kPlanSend:
        return const_cast<uint8_t*>(a.send);
      case kPlanRecv:
        return a.recv;
      case kPlanScratch:
        return a.scratch;
      default:
        return nullptr;
    }
  };
  uint8_t* src = base(op.srcBuf);
  uint8_t* dst = base(op.dstBuf);
  return OpPart{src ? src + op.srcOffset + lo * sizeof(T) : nullptr,
                dst ? dst + op.dstOffset + lo * sizeof(T) : nullptr, (hi - lo) * sizeof(T)};
}

template <class T, class G>
BRAID_HD void runLocal(const G& group, const PlanOp& op, const OpPart& part, int nranks) {
  if (op.kind == PlanOpKind::kCopy) {
    if (part.src == part.dst) return;
    constexpr size_t kPack = 16;
    const size_t packs = (part.bytes + kPack - 1) / kPack;
    for (size_t i = group.rank(); i < packs; i += group.size()) {
      const size_t at = i * kPack;
      const size_t valid = part.bytes - at < kPack ? part.bytes - at : kPack;
      storePack(part.dst + at, loadPack<kPack>(part.src + at, valid), valid);
    }
  } else if (op.kind == PlanOpKind::kDivide && nranks >= 1) {
    const size_t elements = part.bytes / sizeof(T);
    for (size_t i = group.rank(); i < elements; i += group.size()) {
      T x;
      memcpy(&x, part.dst + i * sizeof(T), sizeof(T));
      x = divideElement<T>(x, nranks);
      memcpy(part.dst + i * sizeof(T), &x, sizeof(T));
    }
  }
  group.sync();  // later ops of the step (and the next step) read what this wrote
}

BRAID_HD bool isLocal(PlanOpKind kind) {
  return kind == PlanOpKind::kCopy || kind == PlanOpKind::kDivide;
}

BRAID_HD bool isFused(PlanOpKind kind) {
  return kind == PlanOpKind::kRecvCopySend || kind == PlanOpKind::kRecvReduceCopySend ||
         kind == PlanOpKind::kCopySend;
}

/// Starting progress of a step's op: plain sends have all their bytes available; an empty
/// op has nothing to take; only sends and fused ops have a send part.
template <class T>
BRAID_HD OpProgress initialProgress(const PlanOp& op, const ExecArgs& a) {
  const uint64_t bytes = partOf<T>(op, a).bytes;
  const bool send = op.kind == PlanOpKind::kSend;
  return OpProgress{send ? bytes : 0, 0, send || (bytes == 0 && !isLocal(op.kind)),
                    !(send || isFused(op.kind)) || bytes == 0};
}

/// Makes the leader's new progress of one op every thread's (see step_table.h). Callers
/// have crossed a barrier since their last read of the table.
template <class G>
BRAID_HD void publish(const G& group, OpProgress& entry, const OpProgress& value) {
  if (group.leader()) entry = value;
  group.sync();
}

/// Runs this group's channel of the plan. `sends[p]` / `recvs[p]` are the ends of the FIFOs
/// to / from comm rank p on this channel (only the peers the plan names are touched); they
/// keep their counts across calls, as the FIFOs do. `table` is the group's one StepTable
/// (shared by its threads; its contents on entry do not matter).
template <class T, class Proto, class G>
BRAID_HD int runChannel(const G& group, const ExecArgs& a, typename Proto::SendEnd* sends,
                        typename Proto::RecvEnd* recvs, StepTable& table) {
  using Prims = Primitives<T, Proto>;
  SpinBudget budget{a.spinLimit, 0};
  StepTable& t = table;
  if (group.leader()) t.base = t.count = 0;
  for (uint32_t s = 0; s < a.plan.stepCount; ++s) {
    const PlanOp* stepOps = a.plan.ops + a.plan.stepStarts[s];
    const int stepCount = int(a.plan.stepStarts[s + 1] - a.plan.stepStarts[s]);
    if (stepCount > kMaxStepOps) return kExecBadPlan;
    // The send parts of fused ops that step s - 1 left unfinished belong to step s in the
    // schedule (plan_builder.cc moved them one step early): advanceStep keeps them first.
    group.sync();  // every thread is done reading the previous step's table
    if (group.leader()) {
      advanceStep(t, stepOps, stepCount,
                  [&](const PlanOp& op) { return initialProgress<T>(op, a); });
    }
    group.sync();             // ... and reads the new one from here on
    const int base = t.base;  // step op j is entry base + j
    const int count = t.count;
    for (;;) {
      bool allDone = true, progressed = false;
      for (int i = 0; i < count; ++i) {
        // This thread's copy of op i's progress; changes reach the table through publish().
        OpProgress p = t.progress[i];
        if (p.takeDone && p.giveDone) continue;
        // A fused op of this step whose receive is done may leave its send to the next step.
        const bool mayDefer = i >= base && isFused(t.ops[i]->kind) && p.takeDone;
        allDone &= mayDefer;
        const PlanOp& op = *t.ops[i];
        const int after = op.after >= 0 && i >= base ? base + op.after : -1;
        if (after >= 0 && !(t.progress[after].takeDone && t.progress[after].giveDone)) continue;
        // FIFO order per peer and direction: earlier ops of the step on the same peer first.
        bool mayTake = true, mayGive = true;
        for (int j = 0; j < i; ++j) {
          const PlanOp& earlier = *t.ops[j];
          mayTake &=
              !(op.recvPeer >= 0 && earlier.recvPeer == op.recvPeer && !t.progress[j].takeDone);
          mayGive &=
              !(op.sendPeer >= 0 && earlier.sendPeer == op.sendPeer && !t.progress[j].giveDone);
        }
        const OpPart part = partOf<T>(op, a);
        if (isLocal(op.kind) || op.kind == PlanOpKind::kCopySend) {
          if (!p.takeDone) {  // the local part runs whole; runLocal ends with a barrier
            PlanOp local = op;
            local.kind = op.kind == PlanOpKind::kDivide ? PlanOpKind::kDivide : PlanOpKind::kCopy;
            runLocal<T>(group, local, part, a.nranks);
            p.taken = part.bytes;
            p.takeDone = progressed = true;
            publish(group, t.progress[i], p);
          }
          if (op.kind != PlanOpKind::kCopySend) continue;
        }
        typename Proto::RecvEnd* in = op.recvPeer >= 0 ? &recvs[op.recvPeer] : nullptr;
        typename Proto::SendEnd* out = op.sendPeer >= 0 ? &sends[op.sendPeer] : nullptr;
        // Pick the slice: fused (receive and forward together), catch-up send from dst, or
        // receive only. The leader checks the FIFOs; everyone follows its answer.
        const bool canFuse = in != nullptr && out != nullptr && mayTake && mayGive &&
                             p.given == p.taken && !p.takeDone;
        const bool canCatchUp = out != nullptr && mayGive && p.given < p.taken;
        const bool canTake = in != nullptr && mayTake && !p.takeDone;
        int choice = 0;  // 1 fused, 2 send only, 3 receive only
        if (group.leader()) {
          if (canFuse && in->ready() && out->ready()) {
            choice = 1;
          } else if (canCatchUp && out->ready()) {
            choice = 2;
          } else if (canTake && in->ready()) {
            choice = 3;
          }
        }
        // Agree on the choice bit by bit (agree() carries one boolean). Its barriers also
        // end this pass's reads of the table: below, only the local copy p is used.
        const bool bit0 = group.agree(choice & 1), bit1 = group.agree(choice & 2);
        choice = (bit0 ? 1 : 0) | (bit1 ? 2 : 0);
        if (choice == 0) continue;
        size_t payload = choice == 2 ? out->payloadBytes() : in->payloadBytes();
        if (choice == 1 && out->payloadBytes() < payload) payload = out->payloadBytes();
        const uint64_t at = choice == 2 ? p.given : p.taken;
        const uint64_t limit = choice == 2 ? p.taken : part.bytes;
        const size_t n = limit - at < payload ? size_t(limit - at) : payload;
        const bool reduces =
            op.kind == PlanOpKind::kRecvReduce || op.kind == PlanOpKind::kRecvReduceCopySend;
        bool ok;
        if (choice == 2) {
          // Plain sends read src; fused ops forward what they stored in dst.
          const uint8_t* from = op.kind == PlanOpKind::kSend ? part.src : part.dst;
          ok = Prims::send(group, out, from + at, n, &budget);
        } else {
          const uint8_t* src = reduces ? part.src + at : nullptr;
          ok = Prims::slice(group, in, choice == 1 ? out : nullptr, src, part.dst + at, n, a.op,
                            &budget);
        }
        if (!ok) return kExecStalled;
        if (choice != 2) p.taken += n;
        if (choice != 3) p.given += n;
        p.takeDone = p.taken == part.bytes;
        p.giveDone = p.giveDone || p.given == part.bytes;
        publish(group, t.progress[i], p);
        progressed = true;
      }
      if (allDone) break;  // advanceStep carries the open send parts into the next step
      if (progressed) {
        budget.used = 0;
      } else {
        budget.wait();
        if (group.any(budget.exhausted())) return kExecStalled;
      }
    }
  }
  return kExecOk;
}

}  // namespace braid::device
