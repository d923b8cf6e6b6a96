// One rank's buffers, inputs and output check for device-memory collectives (see header).
#include "support/device_rank_case.h"

#include <algorithm>

#include "collectives/algorithm.h"
#include "support/element_bits.h"
#include "support/reference.h"

namespace braid::testing {

using coll::CollKind;

RankBufferLayout rankBufferLayout(const coll::CollArgs& a) {
  RankBufferLayout l;
  l.sendBytes = coll::sendBufferBytes(a);
  l.recvBytes = coll::recvBufferBytes(a);
  if (!a.inPlace) return l;
  l.wholeBytes = std::max(l.sendBytes, l.recvBytes);
  if (a.kind == CollKind::kAllGather) l.sendOffset = size_t(a.rank) * l.sendBytes;
  if (a.kind == CollKind::kReduceScatter) l.recvOffset = size_t(a.rank) * l.recvBytes;
  return l;
}

InputPattern patternFor(const coll::CollArgs& a, uint64_t seed) {
  const bool reduces = a.kind == CollKind::kAllReduce || a.kind == CollKind::kReduceScatter ||
                       a.kind == CollKind::kReduce;
  return reduces ? InputPattern(a.type, a.op, seed) : InputPattern::forMove(a.type, seed);
}

void fillRankInput(const coll::CollArgs& a, const InputPattern& pattern, uint8_t* send) {
  const size_t elem = elementBytes(a.type);
  pattern.fill(a.rank, 0, coll::sendBufferBytes(a) / elem, send);
}

std::string checkRankOutput(const coll::CollArgs& a, const InputPattern& pattern,
                            const uint8_t* recv) {
  const auto source = sourceFromPattern(pattern);
  const size_t blockBytes = a.count * elementBytes(a.type);
  switch (a.kind) {
    case CollKind::kAllReduce:
      return checkReduced(a.type, a.op, a.nranks, recv, a.count, source, 0);
    case CollKind::kReduceScatter:
      return checkReduced(a.type, a.op, a.nranks, recv, a.count, source, size_t(a.rank) * a.count);
    case CollKind::kBroadcast:
      return checkCopied(a.type, recv, a.count, source, a.root, 0);
    case CollKind::kAllGather:
    case CollKind::kAllToAll:
      for (int p = 0; p < a.nranks; ++p) {
        // All-gather: block p is rank p's input; all-to-all: rank p's block for us.
        const size_t first = a.kind == CollKind::kAllToAll ? size_t(a.rank) * a.count : 0;
        std::string err = checkCopied(a.type, recv + p * blockBytes, a.count, source, p, first);
        if (!err.empty()) return "block from rank " + std::to_string(p) + ": " + err;
      }
      return "";
    default:
      return std::string("no check for ") + coll::collName(a.kind);
  }
}

std::string describeCall(const coll::CollArgs& a) {
  return std::string(coll::collName(a.kind)) + " " + typeLabel(a.type) + " " + opLabel(a.op) +
         " n=" + std::to_string(a.nranks) + " count=" + std::to_string(a.count) +
         (a.inPlace ? " in place" : "");
}

}  // namespace braid::testing
