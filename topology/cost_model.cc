// Shapes of braid's algorithms and the cost formula (see cost_model.h).
//
// Shapes, for n ranks and size S (log = ceil(log2 n); "pipelined" means the
// algorithm streams chunks, so its bytes and its steps overlap rather than add):
//   allreduce ring      2(n-1) steps, 2(n-1)/n S bytes (reduce-scatter + all-gather)
//   allreduce tree      2 log steps,  2 S           (up the double tree, then down; pipelined)
//   allreduce rd        log2 n steps (floor(log2 n) + 2 when n is not 2^k), each moving S
//   broadcast/reduce ring  n-1 steps, S (a pipelined chain)
//   broadcast/reduce tree  log steps,  S
//   allgather/reducescatter ring  n-1 steps, (n-1)/n S
//   alltoall pairwise   n-1 steps, (n-1)/n S;  ring: n-1 steps, (n-1)/2 S (blocks relayed)
//   gather/scatter direct 1 step, (n-1)/n S at the root;  ring: n-1 steps, (n-1)/n S
//   barrier dissemination log steps; ring 2(n-1) steps; no bytes
#include "topology/cost_model.h"

#include <cmath>

namespace braid::topo {
namespace {

double ceilLog2(int n) {
  double steps = 0;
  for (int reach = 1; reach < n; reach *= 2) ++steps;
  return steps;
}

bool powerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace

const char* protocolName(Protocol protocol) {
  switch (protocol) {
    case Protocol::kSimple:
      return "simple";
    case Protocol::kLL:
      return "ll";
    case Protocol::kLL128:
      return "ll128";
  }
  return "?";
}

std::optional<Protocol> protocolFromName(const std::string& name) {
  for (Protocol p : {Protocol::kSimple, Protocol::kLL, Protocol::kLL128}) {
    if (name == protocolName(p)) return p;
  }
  return std::nullopt;
}

std::optional<coll::CollKind> collKindFromName(const std::string& name) {
  for (int k = 0; k <= static_cast<int>(coll::CollKind::kBarrier); ++k) {
    auto kind = static_cast<coll::CollKind>(k);
    if (name == coll::collName(kind)) return kind;
  }
  return std::nullopt;
}

std::optional<Shape> shapeOf(coll::CollKind kind, const std::string& algorithm, int nranks,
                             double s) {
  using coll::CollKind;
  if (nranks < 1) return std::nullopt;
  const double n = nranks;
  const double log = ceilLog2(nranks);
  const double share = (n - 1) / n * s;
  if (nranks == 1) return Shape{0, 0};
  switch (kind) {
    case CollKind::kAllReduce:
      if (algorithm == "ring") return Shape{2 * (n - 1), 2 * share};
      if (algorithm == "tree") return Shape{2 * log, 2 * s};
      if (algorithm == "rd") {
        // Not a power of two: fold the extra ranks in, exchange over 2^floor(log2 n), unfold.
        double steps = powerOfTwo(nranks) ? log : log - 1 + 2;
        return Shape{steps, steps * s};
      }
      break;
    case CollKind::kBroadcast:
    case CollKind::kReduce:
      if (algorithm == "ring") return Shape{n - 1, s};
      if (algorithm == "tree") return Shape{log, s};
      break;
    case CollKind::kAllGather:
    case CollKind::kReduceScatter:
      if (algorithm == "ring") return Shape{n - 1, share};
      break;
    case CollKind::kAllToAll:
    case CollKind::kAllToAllv:
      if (algorithm == "pairwise") return Shape{n - 1, share};
      if (algorithm == "ring") return Shape{n - 1, (n - 1) / 2 * s};
      break;
    case CollKind::kGather:
    case CollKind::kScatter:
      if (algorithm == "direct") return Shape{1, share};
      if (algorithm == "ring") return Shape{n - 1, share};
      break;
    case CollKind::kBarrier:
      if (algorithm == "dissemination") return Shape{log, 0};
      if (algorithm == "ring") return Shape{2 * (n - 1), 0};
      break;
  }
  return std::nullopt;
}

double reportedSize(coll::CollKind kind, double countBytes, int nranks) {
  using coll::CollKind;
  switch (kind) {
    case CollKind::kAllReduce:
    case CollKind::kBroadcast:
    case CollKind::kReduce:
    case CollKind::kBarrier:
      return countBytes;
    default:
      return countBytes * nranks;
  }
}

double timeUs(const Shape& shape, const CostParams& params) {
  // GB/s is 1e3 bytes per microsecond.
  return params.overheadUs + shape.steps * params.stepUs + shape.wireBytes / (params.gbps * 1e3);
}

void CostModel::set(const CostEntry& entry) {
  for (CostEntry& e : entries_) {
    if (e.kind == entry.kind && e.algorithm == entry.algorithm && e.protocol == entry.protocol &&
        e.link == entry.link) {
      e.params = entry.params;
      return;
    }
  }
  entries_.push_back(entry);
}

const CostParams* CostModel::find(coll::CollKind kind, const std::string& algorithm,
                                  Protocol protocol, const std::string& link) const {
  for (const CostEntry& e : entries_) {
    if (e.kind == kind && e.algorithm == algorithm && e.protocol == protocol && e.link == link) {
      return &e.params;
    }
  }
  return nullptr;
}

std::optional<double> CostModel::predictUs(coll::CollKind kind, const std::string& algorithm,
                                           Protocol protocol, const std::string& link, int nranks,
                                           double sizeBytes) const {
  const CostParams* params = find(kind, algorithm, protocol, link);
  std::optional<Shape> shape = shapeOf(kind, algorithm, nranks, sizeBytes);
  if (params == nullptr || !shape) return std::nullopt;
  return timeUs(*shape, *params);
}

}  // namespace braid::topo
