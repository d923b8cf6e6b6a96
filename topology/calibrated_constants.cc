// The cost model's constants for the CPU links, as fitted on braid's development
// machine (a 2-core VM shared with other jobs; see docs/TOPOLOGY.md for the error).
//
// Reproduce: topology/calibration/measure.sh build DIR 5 shm; ... DIR 3 socket;
//            topology/calibration/medians.py DIR > topology/calibration/samples.csv;
//            build/tools/braid-topo --calibrate topology/calibration/samples.csv
// and paste the printed rows here.
#include "topology/cost_model.h"

namespace braid::topo {
namespace {

struct Row {
  const char* collective;
  const char* algorithm;
  const char* link;
  double overheadUs, stepUs, gbps;
};

// {collective, algorithm, link, overhead us, per-step us, GB/s}
constexpr Row kRows[] = {
    {"allreduce", "rd", "shm", 6.44, 0, 3.422},
    {"allreduce", "ring", "shm", 0, 3.45, 2.492},
    {"allreduce", "tree", "shm", 0, 3.23, 2.632},
    {"broadcast", "ring", "shm", 0.992, 0.354, 5},
    {"broadcast", "tree", "shm", 0, 1.99, 4.897},
    {"reduce", "ring", "shm", 1.28, 0.202, 6.178},
    {"reduce", "tree", "shm", 0, 1.98, 3.734},
    {"allgather", "ring", "shm", 0, 2.87, 3.409},
    {"reducescatter", "ring", "shm", 0, 3.22, 3.228},
    {"alltoall", "pairwise", "shm", 0, 3.18, 1.287},
    {"alltoall", "ring", "shm", 0, 3.5, 3.015},
};

}  // namespace

const CostModel& CostModel::calibrated() {
  static const CostModel model = [] {
    CostModel m;
    for (const Row& row : kRows) {
      std::optional<coll::CollKind> kind = collKindFromName(row.collective);
      if (!kind) continue;  // cannot happen: the rows are generated from collName spellings
      m.set({*kind,
             row.algorithm,
             Protocol::kSimple,
             row.link,
             {row.overheadUs, row.stepUs, row.gbps}});
    }
    return m;
  }();
  return model;
}

}  // namespace braid::topo
