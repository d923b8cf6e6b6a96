// The cost model's constants for the CPU links (shm, socket), fitted on braid's
// development machine: a 2-core VM shared with other jobs (load average 12-26 while
// measuring), so they describe a busy machine; docs/TOPOLOGY.md gives their error.
// Automatic selection uses the shm rows (collectives/algorithm.cc); the socket rows feed
// braid-topo and braid-sim only, as a collective's arguments do not name the transport.
//
// Reproduce (about 10 minutes):
//   topology/calibration/measure.sh build DIR 5 shm
//   topology/calibration/measure.sh build DIR 3 socket
//   topology/calibration/medians.py DIR > topology/calibration/samples-DATE.csv
//   build/tools/braid-topo --calibrate topology/calibration/samples-DATE.csv --cores 2
// and paste the printed rows below.
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
    {"allreduce", "rd", "socket", 139, 165, 0.3044},
    {"allreduce", "ring", "socket", 565, 0, 0.2551},
    {"allreduce", "tree", "socket", 533, 0, 0.2524},
    {"broadcast", "ring", "socket", 0, 32.7, 0.739},
    {"broadcast", "tree", "socket", 0, 58.4, 0.415},
    {"reduce", "ring", "socket", 0, 9.28, 0.45},
    {"reduce", "tree", "socket", 0, 74.6, 0.447},
    {"allgather", "ring", "socket", 0, 81.3, 1.039},
    {"reducescatter", "ring", "socket", 112, 37.6, 0.5288},
    {"alltoall", "pairwise", "socket", 0, 83, 0.3958},
    {"alltoall", "ring", "socket", 0, 117, 0.5436},
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
