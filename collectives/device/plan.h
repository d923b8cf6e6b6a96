// The device plan: a Schedule (collectives/schedule.h) flattened into plain arrays that a
// kernel can walk — no std::vector, no strings — plus the fused operations the primitives
// offer (a receive and the send of the same bytes in the next step become one pass).
//
// Ops of step s are ops[stepStarts[s] .. stepStarts[s + 1]); `after` indexes an op of the
// same step, as in the Schedule. Peers are comm ranks; the executor maps them to FIFO ends.
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid::device {

enum class PlanOpKind : uint8_t {
  kSend,                // src -> sendPeer
  kRecv,                // recvPeer -> dst
  kRecvReduce,          // dst = src (op) recvPeer
  kCopy,                // dst = src (local)
  kDivide,              // dst /= nranks (local)
  kRecvCopySend,        // dst = recvPeer's data, also forwarded to sendPeer
  kRecvReduceCopySend,  // dst = src (op) recvPeer's data, also forwarded to sendPeer
  kCopySend,            // dst = src, also sent to sendPeer
};

/// BufferIds as in the Schedule: 0 send, 1 recv, 2 scratch.
enum PlanBuffer : uint8_t { kPlanSend = 0, kPlanRecv = 1, kPlanScratch = 2, kPlanNone = 3 };

struct PlanOp {
  PlanOpKind kind = PlanOpKind::kCopy;
  int8_t after = -1;  // op of the same step that must finish first
  uint8_t srcBuf = kPlanNone;
  uint8_t dstBuf = kPlanNone;
  int32_t recvPeer = -1;
  int32_t sendPeer = -1;
  uint64_t srcOffset = 0;
  uint64_t dstOffset = 0;
  uint64_t bytes = 0;
};

/// What the executor walks: views of the arrays the host built (host or device memory).
struct PlanView {
  const PlanOp* ops = nullptr;
  const uint32_t* stepStarts = nullptr;  // stepCount + 1 entries
  uint32_t stepCount = 0;
};

/// The most ops one step may have: the executor keeps per-op progress in a fixed table per
/// thread block (step_table.h, shared memory). Pairwise all-to-all at 32 ranks has 62.
constexpr int kMaxStepOps = 64;

}  // namespace braid::device
