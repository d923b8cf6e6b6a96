// Argument checks: every bad argument becomes braidInvalidArgument with a
// sentence that names it, before any byte moves.
#include <cstdint>
#include <string>
#include <utility>

#include "collectives/algorithm.h"
#include "comm/comm.h"
#include "comm/op.h"
#include "core/types.h"

namespace braid {
namespace {

using coll::CollKind;

bool rootSends(const Op& op) {
  return op.coll == CollKind::kBroadcast || op.coll == CollKind::kScatter;
}
bool rootReceives(const Op& op) {
  return op.coll == CollKind::kReduce || op.coll == CollKind::kGather;
}
bool needsRoot(const Op& op) { return rootSends(op) || rootReceives(op); }
bool reduces(const Op& op) {
  return op.coll == CollKind::kAllReduce || op.coll == CollKind::kReduce ||
         op.coll == CollKind::kReduceScatter;
}

Status bad(const Op& op, const std::string& what) {
  return invalidArgument(std::string(op.apiName) + ": " + what);
}

// AllToAllv's counts and displacements, each at most `limit` elements: a block's end
// (displacement + count) times the element size then cannot wrap around, so the buffer
// extent computed from them is exact and a NULL buffer with a huge extent is seen as such.
Status checkVectorLimits(const Op& op, size_t limit) {
  const std::pair<const char*, const std::vector<size_t>*> arrays[] = {
      {"sendcounts", &op.sendCounts},
      {"sdispls", &op.sendDispls},
      {"recvcounts", &op.recvCounts},
      {"rdispls", &op.recvDispls}};
  for (const auto& [name, values] : arrays) {
    for (size_t j = 0; j < values->size(); ++j) {
      if ((*values)[j] > limit) {
        return bad(op, std::string(name) + "[" + std::to_string(j) +
                           "] = " + std::to_string((*values)[j]) + " is too large (at most " +
                           std::to_string(limit) + " elements)");
      }
    }
  }
  return Status::ok();
}

// Partial overlap of send and recv is never meaningful; exact in-place forms are.
bool overlapsBadly(const Op& op, size_t sb, size_t rb) {
  auto s = reinterpret_cast<uintptr_t>(op.send);
  auto r = reinterpret_cast<uintptr_t>(op.recv);
  if (s == 0 || r == 0 || sb == 0 || rb == 0) return false;
  bool overlap = s < r + rb && r < s + sb;
  return overlap && !isInPlace(op);
}

}  // namespace

coll::CollArgs toCollArgs(const Op& op) {
  const Comm& comm = *op.comm;
  coll::CollArgs a;
  a.kind = op.coll;
  a.count = op.count;
  a.type = op.type;
  a.op = op.op;
  a.root = op.root;
  a.rank = comm.rank();
  a.nranks = comm.nranks();
  a.inPlace = isInPlace(op);
  a.chunkBytes = comm.config().chunkBytes;
  a.hosts = comm.hosts();
  a.domains = comm.domains();
  a.sharedMemory = comm.sharedMemoryLinks();
  a.tinyBytes = comm.config().tinyBytes;
  if (op.coll == CollKind::kAllToAllv) {  // the only kind that reads them
    a.sendCounts = op.sendCounts;
    a.sendDispls = op.sendDispls;
    a.recvCounts = op.recvCounts;
    a.recvDispls = op.recvDispls;
  }
  return a;
}

BufferBytes bufferBytes(const Op& op) {
  const size_t message = op.count * typeSize(op.type);
  switch (op.kind) {
    case OpKind::kSend:
      return {message, 0};
    case OpKind::kRecv:
      return {0, message};
    case OpKind::kCollective:
      break;
  }
  if (op.coll == CollKind::kAllToAllv) {
    const coll::CollArgs args = toCollArgs(op);  // once: building it costs more than the sums
    return {coll::sendBufferBytes(args), coll::recvBufferBytes(args)};
  }
  // The sums read only the shape: every call pays this, so no CollArgs (its host list and
  // vectors cost a destructor call) and one call for both sizes.
  const coll::BufferSizes sizes =
      coll::bufferSizes({op.coll, op.count, op.type, op.root, op.comm->rank(), op.comm->nranks()});
  return {sizes.send, sizes.recv};
}

bool isInPlaceSliced(const Op& op) {
  auto s = static_cast<const uint8_t*>(op.send);
  auto r = static_cast<const uint8_t*>(op.recv);
  const size_t slice = op.count * typeSize(op.type);
  const int rank = op.comm->rank();
  switch (op.coll) {
    case CollKind::kAllGather:
      return s == r + rank * slice;
    case CollKind::kReduceScatter:
      return r == s + rank * slice;
    case CollKind::kGather:
      return rank == op.root && s == r + rank * slice;
    case CollKind::kScatter:
      return rank == op.root && r == s + rank * slice;
    default:
      return s == r;
  }
}

bool movesNothingSlow(const Op& op) {
  if (op.coll == CollKind::kBarrier) return op.comm->nranks() == 1;
  if (op.coll == CollKind::kAllToAllv) {
    for (size_t i = 0; i < op.sendCounts.size(); ++i) {
      if (op.sendCounts[i] || op.recvCounts[i]) return false;
    }
    return true;
  }
  return op.count == 0;
}

Status validate(const Op& op) {
  const Comm& comm = *op.comm;
  const int n = comm.nranks();
  if (!isValidType(op.type)) {
    return bad(op, "datatype " + std::to_string(static_cast<int>(op.type)) +
                       " is not a braidDataType_t (valid: 0.." + std::to_string(braidNumTypes - 1) +
                       ")");
  }
  if (op.kind == OpKind::kCollective && reduces(op) && !isValidOp(op.op)) {
    return bad(op, "op " + std::to_string(static_cast<int>(op.op)) +
                       " is not a braidRedOp_t (valid: 0.." + std::to_string(braidNumOps - 1) +
                       ")");
  }
  if (op.kind != OpKind::kCollective) {
    if (op.peer < 0 || op.peer >= n) {
      return bad(op, "peer " + std::to_string(op.peer) + " is out of range for a communicator of " +
                         std::to_string(n) + " ranks");
    }
  } else if (needsRoot(op) && (op.root < 0 || op.root >= n)) {
    return bad(op, "root " + std::to_string(op.root) + " is out of range for a communicator of " +
                       std::to_string(n) + " ranks");
  }
  if (op.coll == CollKind::kAllToAllv && op.kind == OpKind::kCollective) {
    if (op.sendCounts.empty() || op.recvCounts.empty()) {
      return bad(op, "sendcounts, sdispls, recvcounts and rdispls must not be NULL");
    }
    // The block a rank sends itself is its own receive block: the sizes must agree (the
    // schedule copies it locally, so no peer would notice a mismatch).
    const size_t self = static_cast<size_t>(comm.rank());
    if (op.sendCounts[self] != op.recvCounts[self]) {
      return bad(op, "sendcounts[" + std::to_string(self) +
                         "] = " + std::to_string(op.sendCounts[self]) + " but recvcounts[" +
                         std::to_string(self) + "] = " + std::to_string(op.recvCounts[self]) +
                         ": what rank " + std::to_string(self) + " sends itself must match " +
                         "what it receives from itself");
    }
  }
  const size_t limit = SIZE_MAX / 64 / static_cast<size_t>(n);
  if (op.count > limit) return bad(op, "count " + std::to_string(op.count) + " is too large");
  if (op.coll == CollKind::kAllToAllv && op.kind == OpKind::kCollective) {
    BRAID_RETURN_IF_ERROR(checkVectorLimits(op, limit));
  }
  const auto [sendBytes, recvBytes] = bufferBytes(op);
  if (sendBytes > 0 && op.send == nullptr) {
    return bad(op, "sendbuff is NULL but this rank sends " + std::to_string(sendBytes) + " bytes");
  }
  if (recvBytes > 0 && op.recv == nullptr) {
    return bad(op,
               "recvbuff is NULL but this rank receives " + std::to_string(recvBytes) + " bytes");
  }
  if (op.kind == OpKind::kCollective && overlapsBadly(op, sendBytes, recvBytes)) {
    return bad(op, "sendbuff and recvbuff overlap, but not in an in-place form");
  }
  return Status::ok();
}

}  // namespace braid
