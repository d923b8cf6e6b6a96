// Choosing by predicted time (see tuner.h).
#include "topology/tuner.h"

#include <cstdio>

namespace braid::topo {

std::optional<Choice> fastest(const CostModel& model, const std::string& link, coll::CollKind kind,
                              double countBytes, int nranks,
                              const std::vector<std::string>& candidates,
                              const std::vector<Protocol>& protocols) {
  std::optional<Choice> best;
  const double size = reportedSize(kind, countBytes, nranks);
  for (const std::string& algorithm : candidates) {
    for (Protocol protocol : protocols) {
      std::optional<double> us = model.predictUs(kind, algorithm, protocol, link, nranks, size);
      if (us && (!best || *us < best->predictedUs)) best = Choice{algorithm, protocol, *us};
    }
  }
  return best;
}

std::string tuningTable(int nranks, size_t maxBytes, const std::vector<coll::CollKind>& kinds,
                        const std::function<std::string(coll::CollKind, size_t, int)>& pick) {
  char cell[64];
  std::string out = "  bytes/rank";
  for (coll::CollKind kind : kinds) {
    std::snprintf(cell, sizeof(cell), " %14s", coll::collName(kind));
    out += cell;
  }
  out += "\n";
  for (size_t bytes = 8; bytes <= maxBytes; bytes *= 4) {
    std::snprintf(cell, sizeof(cell), "  %10zu", bytes);
    out += cell;
    for (coll::CollKind kind : kinds) {
      std::snprintf(cell, sizeof(cell), " %14s", pick(kind, bytes, nranks).c_str());
      out += cell;
    }
    out += "\n";
  }
  return out;
}

}  // namespace braid::topo
