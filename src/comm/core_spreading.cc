#include "comm/core_spreading.h"

#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/log.h"

namespace braid {
namespace {

// Reads BRAID_BIND into *spread: "spread" pins, unset or "none" does not.
Status readBindSetting(bool* spread) {
  const char* v = std::getenv("BRAID_BIND");
  *spread = v != nullptr && std::strcmp(v, "spread") == 0;
  if (*spread || v == nullptr || *v == '\0' || std::strcmp(v, "none") == 0) return Status::ok();
  return invalidArgument(std::string("BRAID_BIND='") + v + "': expected 'spread' or 'none'");
}

}  // namespace

Status spreadOverCores(int localIndex, int localRanks, int* pinnedCpu) {
  static std::atomic<bool> done{false};
  *pinnedCpu = -1;
  bool spread = false;
  BRAID_RETURN_IF_ERROR(readBindSetting(&spread));
  if (!spread || localIndex < 0 || localIndex >= localRanks) return Status::ok();
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return Status::ok();
  const int cpus = CPU_COUNT(&allowed);
  if (cpus < 1 || localRanks <= cpus || done.exchange(true)) return Status::ok();
  // The (localIndex mod cpus)-th allowed CPU, counting in CPU order.
  int wanted = localIndex % cpus;
  int cpu = -1;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed) && wanted-- == 0) {
      cpu = c;
      break;
    }
  }
  if (cpu < 0) return Status::ok();
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof(one), &one) != 0) {
    BRAID_WARN(
        "local rank %d of %d: cannot pin to CPU %d; ranks keep sharing cores as the "
        "scheduler places them",
        localIndex, localRanks, cpu);
    return Status::ok();
  }
  BRAID_INFO("local rank %d of %d on %d CPUs: pinned to CPU %d (BRAID_BIND=spread)", localIndex,
             localRanks, cpus, cpu);
  *pinnedCpu = cpu;
  return Status::ok();
}

}  // namespace braid
