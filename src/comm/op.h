// One call of the C API, as queued for execution: a collective or a send/recv.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "braid.h"
#include "collectives/schedule.h"
#include "core/status.h"

namespace braid {

class Comm;

enum class OpKind { kCollective, kSend, kRecv };

/// Where a call's buffers live, decided once per call (decideMemory, comm/device_path.h) and
/// stored in it, so no later step asks the driver again. kMixed (one buffer of each) is
/// refused on the device path with an error naming the call.
enum class BufferMemory : uint8_t { kHost, kDevice, kMixed };

struct Op {
  OpKind kind = OpKind::kCollective;
  coll::CollKind coll = coll::CollKind::kAllReduce;  // for kCollective
  const char* apiName = "";                          // "braidAllReduce", for messages
  Comm* comm = nullptr;  // owned by the application; valid until the op completes
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;
  braidDataType_t type = braidUint8;
  braidRedOp_t op = braidSum;
  int root = 0;
  int peer = -1;  // kSend / kRecv
  BufferMemory memory = BufferMemory::kHost;
  std::vector<size_t> sendCounts, sendDispls, recvCounts, recvDispls;  // AllToAllv
  std::shared_ptr<void> scaledInput;  // a pre-multiplied copy of `send` (comm/user_ops.h)
};

/// Checks `op` against its communicator; errors name the argument at fault.
Status validate(const Op& op);

/// Bytes of the send and receive buffers this rank's part of `op` touches.
struct BufferBytes {
  size_t send = 0;
  size_t recv = 0;
};
BufferBytes bufferBytes(const Op& op);

/// The algorithm layer's description of a collective op.
coll::CollArgs toCollArgs(const Op& op);

/// isInPlace for the collectives whose in-place form offsets one buffer by this
/// rank's block (all-gather, reduce-scatter, gather, scatter).
bool isInPlaceSliced(const Op& op);

/// True when the buffers alias exactly as the C API's in-place form allows. Inline:
/// every cached call asks, and for most collectives it is one comparison.
inline bool isInPlace(const Op& op) {
  if (op.kind != OpKind::kCollective || op.send == nullptr || op.recv == nullptr) return false;
  switch (op.coll) {
    case coll::CollKind::kAllGather:
    case coll::CollKind::kReduceScatter:
    case coll::CollKind::kGather:
    case coll::CollKind::kScatter:
      return isInPlaceSliced(op);
    default:
      return op.send == op.recv;
  }
}

/// movesNothing for barriers and AllToAllv.
bool movesNothingSlow(const Op& op);

/// True when a collective has nothing to move: zero counts (a barrier of more
/// than one rank always synchronises).
inline bool movesNothing(const Op& op) {
  if (op.coll == coll::CollKind::kBarrier || op.coll == coll::CollKind::kAllToAllv) {
    return movesNothingSlow(op);
  }
  return op.count == 0;
}

}  // namespace braid
