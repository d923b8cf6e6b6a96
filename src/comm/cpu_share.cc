#include "comm/cpu_share.h"

#include <algorithm>

namespace braid {

CpuShare shareCpus(const std::vector<cpu_set_t>& localMasks) {
  CpuShare share;
  share.localRanks = std::max(static_cast<int>(localMasks.size()), 1);
  cpu_set_t all;
  CPU_ZERO(&all);
  bool disjoint = true;
  for (const cpu_set_t& mask : localMasks) {
    cpu_set_t overlap;
    CPU_AND(&overlap, &all, &mask);
    disjoint = disjoint && CPU_COUNT(&mask) > 0 && CPU_COUNT(&overlap) == 0;
    CPU_OR(&all, &all, &mask);
  }
  share.cpus = std::max(CPU_COUNT(&all), 1);
  share.apart = localMasks.size() >= 2 && disjoint;
  return share;
}

}  // namespace braid
