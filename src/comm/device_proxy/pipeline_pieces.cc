#include "comm/device_proxy/pipeline_pieces.h"

#include <algorithm>

#include "core/types.h"

namespace braid {
namespace {

bool elementwise(const Op& op) {
  return op.kind == OpKind::kCollective &&
         (op.coll == coll::CollKind::kAllReduce || op.coll == coll::CollKind::kReduce ||
          op.coll == coll::CollKind::kBroadcast);
}

}  // namespace

std::vector<Op> pipelinePieces(const Op& op, size_t pieceBytes) {
  const size_t elementBytes = typeSize(op.type);
  const size_t pieceCount = std::max<size_t>(1, pieceBytes / elementBytes);
  if (!elementwise(op) || op.count <= 2 * pieceCount) return {op};
  std::vector<Op> pieces;
  for (size_t first = 0; first < op.count; first += pieceCount) {
    Op piece = op;
    piece.count = std::min(pieceCount, op.count - first);
    const size_t offset = first * elementBytes;
    // A buffer the rank does not use (a non-root's, say) may be null: it stays null.
    if (op.send != nullptr) piece.send = static_cast<const uint8_t*>(op.send) + offset;
    if (op.recv != nullptr) piece.recv = static_cast<uint8_t*>(op.recv) + offset;
    pieces.push_back(std::move(piece));
  }
  return pieces;
}

}  // namespace braid
