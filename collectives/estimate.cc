#include "collectives/estimate.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <vector>

#include "core/types.h"
#include "topology/cost_model.h"
#include "topology/tuner.h"

namespace braid::coll {
namespace {

bool spansHosts(const CollArgs& args) {
  return args.hosts != nullptr &&
         std::any_of(args.hosts->begin(), args.hosts->end(), [](int h) { return h != 0; });
}

// Every algorithm the model has constants for, for `kind` on `link`.
std::vector<std::string> modelledAlgorithms(const topo::CostModel& model, CollKind kind,
                                            const std::string& link) {
  std::vector<std::string> names;
  for (const topo::CostEntry& e : model.entries()) {
    if (e.kind == kind && e.link == link &&
        std::find(names.begin(), names.end(), e.algorithm) == names.end()) {
      names.push_back(e.algorithm);
    }
  }
  return names;
}

// `algorithm`'s prediction, else the fastest modelled algorithm's; 0 if the model knows
// nothing of `kind` on `link` (it covers every kind used here on shm and socket).
double predict(CollKind kind, const std::string& algorithm, const std::string& link, int nranks,
               double countBytes) {
  const topo::CostModel& model = topo::CostModel::calibrated();
  const std::optional<double> exact =
      model.predictUs(kind, algorithm, topo::Protocol::kSimple, link, nranks,
                      topo::reportedSize(kind, countBytes, nranks));
  if (exact) return *exact;
  const std::optional<topo::Choice> best =
      topo::fastest(model, link, kind, countBytes, nranks, modelledAlgorithms(model, kind, link));
  return best ? best->predictedUs : 0.0;
}

}  // namespace

double estimateCollectiveUs(const CollArgs& args, const std::string& algorithm) {
  if (args.nranks <= 1) return 0.0;
  const std::string link = spansHosts(args) ? "socket" : "shm";
  const double elementBytes = static_cast<double>(typeSize(args.type));
  double countBytes = static_cast<double>(args.count) * elementBytes;
  CollKind kind = args.kind;
  switch (args.kind) {
    case CollKind::kAllToAllv: {
      const size_t sent =
          std::accumulate(args.sendCounts.begin(), args.sendCounts.end(), size_t{0});
      countBytes = static_cast<double>(sent) * elementBytes / args.nranks;
      kind = CollKind::kAllToAll;
      break;
    }
    case CollKind::kGather:
    case CollKind::kScatter:
      kind = CollKind::kAllGather;
      break;
    case CollKind::kBarrier:
      kind = CollKind::kAllReduce;
      countBytes = 0;
      break;
    default:
      break;
  }
  return predict(kind, kind == args.kind ? algorithm : std::string(), link, args.nranks,
                 countBytes);
}

double estimatePointToPointUs(size_t bytes, bool acrossHosts) {
  return predict(CollKind::kBroadcast, "ring", acrossHosts ? "socket" : "shm", 2,
                 static_cast<double>(bytes));
}

}  // namespace braid::coll
