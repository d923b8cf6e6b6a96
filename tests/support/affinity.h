// The CPUs the calling thread may run on, for tests that place ranks.
#pragma once

#include <sched.h>

#include <vector>

namespace braid::testing {

/// The calling thread's affinity, ascending; empty when the kernel will not say.
inline std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

}  // namespace braid::testing
