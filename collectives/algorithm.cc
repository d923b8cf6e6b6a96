#include "collectives/algorithm.h"

#include <algorithm>

#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/hierarchical.h"
#include "core/types.h"

namespace braid::coll {

namespace {

const std::vector<Algorithm>& registry() {
  // Per collective, the large-message default comes first (algorithmNames keeps this order).
  static const std::vector<Algorithm> kAlgorithms = {
      {"ring", CollKind::kAllReduce, nullptr, buildRingAllReduce},
      {"tree", CollKind::kAllReduce, nullptr, buildTreeAllReduce},
      {"rd", CollKind::kAllReduce, supportsRecursiveDoublingAllReduce,
       buildRecursiveDoublingAllReduce},
      {"hier", CollKind::kAllReduce, supportsHierarchical, buildHierarchicalAllReduce},
      {"hiertree", CollKind::kAllReduce, supportsHierarchical, buildHierarchicalTreeAllReduce},
      {"exchange", CollKind::kAllReduce, supportsExchange, buildExchangeAllReduce},
      {"ring", CollKind::kBroadcast, nullptr, buildRingBroadcast},
      {"tree", CollKind::kBroadcast, nullptr, buildTreeBroadcast},
      {"binomial", CollKind::kBroadcast, nullptr, buildBinomialBroadcast},
      {"hier", CollKind::kBroadcast, supportsHierarchical, buildHierarchicalBroadcast},
      {"direct", CollKind::kBroadcast, nullptr, buildDirectBroadcast},
      {"ring", CollKind::kReduce, nullptr, buildRingReduce},
      {"tree", CollKind::kReduce, nullptr, buildTreeReduce},
      {"hier", CollKind::kReduce, supportsHierarchical, buildHierarchicalReduce},
      {"ring", CollKind::kAllGather, nullptr, buildRingAllGather},
      {"direct", CollKind::kAllGather, nullptr, buildDirectAllGather},
      {"ring", CollKind::kReduceScatter, nullptr, buildRingReduceScatter},
      {"pairwise", CollKind::kAllToAll, nullptr, buildPairwiseAllToAll},
      {"ring", CollKind::kAllToAll, nullptr, buildRingAllToAll},
      {"direct", CollKind::kAllToAll, nullptr, buildDirectAllToAll},
      {"pairwise", CollKind::kAllToAllv, nullptr, buildPairwiseAllToAllv},
      {"direct", CollKind::kAllToAllv, nullptr, buildDirectAllToAllv},
      {"direct", CollKind::kGather, nullptr, buildDirectGather},
      {"ring", CollKind::kGather, nullptr, buildRingGather},
      {"direct", CollKind::kScatter, nullptr, buildDirectScatter},
      {"ring", CollKind::kScatter, nullptr, buildRingScatter},
      {"dissemination", CollKind::kBarrier, nullptr, buildDisseminationBarrier},
      {"ring", CollKind::kBarrier, nullptr, buildRingBarrier},
      {"exchange", CollKind::kBarrier, supportsExchange, buildExchangeAllReduce},
  };
  return kAlgorithms;
}

// The bytes an all-to-all-v buffer spans: the end of its farthest non-empty block.
size_t extentBytes(const std::vector<size_t>& counts, const std::vector<size_t>& displs,
                   size_t elemBytes) {
  size_t end = 0;
  for (size_t j = 0; j < counts.size() && j < displs.size(); ++j) {
    if (counts[j] > 0) end = std::max(end, displs[j] + counts[j]);
  }
  return end * elemBytes;
}

}  // namespace

const Algorithm* findAlgorithm(const std::string& name, const CollArgs& args) {
  for (const Algorithm& algorithm : registry()) {
    if (algorithm.kind == args.kind && name == algorithm.name &&
        (algorithm.supports == nullptr || algorithm.supports(args))) {
      return &algorithm;
    }
  }
  return nullptr;
}

std::string knownAlgorithmNames() {
  std::vector<std::string> names;
  for (const Algorithm& algorithm : registry()) {
    if (std::find(names.begin(), names.end(), algorithm.name) == names.end()) {
      names.push_back(algorithm.name);
    }
  }
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

const std::vector<Algorithm>& allAlgorithms() { return registry(); }

std::vector<std::string> algorithmNames(CollKind kind) {
  std::vector<std::string> names;
  for (const Algorithm& algorithm : registry()) {
    if (algorithm.kind == kind) names.push_back(algorithm.name);
  }
  return names;
}

bool isAlgorithmName(const std::string& name) {
  for (const Algorithm& algorithm : registry()) {
    if (name == algorithm.name) return true;
  }
  return false;
}

Result<Schedule> buildSchedule(const CollArgs& args, const Algorithm& algorithm) {
  if (args.nranks < 1 || args.rank < 0 || args.rank >= args.nranks) {
    return internalError("buildSchedule: rank " + std::to_string(args.rank) +
                         " is outside a communicator of " + std::to_string(args.nranks));
  }
  if (typeSize(args.type) == 0) {
    return internalError("buildSchedule: invalid datatype " +
                         std::to_string(static_cast<int>(args.type)));
  }
  if (args.kind == CollKind::kAllToAllv) {
    size_t n = static_cast<size_t>(args.nranks);
    if (args.sendCounts.size() != n || args.sendDispls.size() != n || args.recvCounts.size() != n ||
        args.recvDispls.size() != n) {
      return internalError("buildSchedule: alltoallv needs one count and displacement per rank");
    }
  }
  if (algorithm.kind != args.kind || (algorithm.supports && !algorithm.supports(args))) {
    return internalError(std::string("buildSchedule: ") + algorithm.name + " does not run this " +
                         collName(args.kind));
  }
  return algorithm.build(args);
}

BufferSizes bufferSizes(const CallShape& shape) {
  const size_t block = shape.count * typeSize(shape.type);
  const size_t n = static_cast<size_t>(shape.nranks);
  const bool root = shape.rank == shape.root;
  switch (shape.kind) {
    case CollKind::kAllReduce:
      return {block, block};
    case CollKind::kReduce:
      return {block, root ? block : 0};
    case CollKind::kAllGather:
      return {block, n * block};
    case CollKind::kGather:
      return {block, root ? n * block : 0};
    case CollKind::kBroadcast:
      return {root ? block : 0, block};
    case CollKind::kReduceScatter:
      return {n * block, block};
    case CollKind::kAllToAll:
      return {n * block, n * block};
    case CollKind::kScatter:
      return {root ? n * block : 0, block};
    case CollKind::kAllToAllv:  // per-rank counts: sendBufferBytes / recvBufferBytes
    case CollKind::kBarrier:
      return {};
  }
  return {};
}

namespace {

CallShape shapeOf(const CollArgs& args) {
  return {args.kind, args.count, args.type, args.root, args.rank, args.nranks};
}

}  // namespace

size_t sendBufferBytes(const CollArgs& args) {
  if (args.kind == CollKind::kAllToAllv) {
    return extentBytes(args.sendCounts, args.sendDispls, typeSize(args.type));
  }
  return bufferSizes(shapeOf(args)).send;
}

size_t recvBufferBytes(const CollArgs& args) {
  if (args.kind == CollKind::kAllToAllv) {
    return extentBytes(args.recvCounts, args.recvDispls, typeSize(args.type));
  }
  return bufferSizes(shapeOf(args)).recv;
}

}  // namespace braid::coll
