// Which L3 cache and NUMA node each CPU of this host belongs to, and which of them a process
// may run in: the first step of placing rings and FIFO memory by cache domain. Two ranks
// under one L3 hand cache lines to each other cheaply; across L3 domains (another CCX,
// socket or NUMA node) every line crosses the interconnect, which is what makes the shm
// FIFO slow there (transports/shm/copy_pace.h measures the same thing at run time).
//
// Sources: hwloc (loaded with dlopen) when present, else sysfs
// (/sys/devices/system/cpu/cpuN/cache/index*/ and /sys/devices/system/node/nodeK/cpulist).
// What neither says is -1.
#pragma once

#include <sched.h>

#include <string>
#include <vector>

namespace braid::topo {

struct CpuPlace {
  int cpu = -1;
  int l3 = -1;    // the same number for CPUs that share an L3 (hwloc's logical index or sysfs' id)
  int numa = -1;  // the NUMA node
};

struct CpuPlaces {
  std::vector<CpuPlace> cpus;  // by CPU number, online CPUs only
  std::string source;          // "hwloc", "sysfs" or "none"
};

/// This host's CPUs: from hwloc, else from sysfs.
CpuPlaces cpuPlaces();

/// Where a process may run: the L3 domains and NUMA nodes its affinity mask touches, and the
/// CPU it ran on last with that CPU's domains (an unbound process can move).
struct CacheDomains {
  std::vector<int> l3;
  std::vector<int> numa;
  int cpu = -1;
  int cpuL3 = -1;
  int cpuNuma = -1;
  std::string source;
};

/// The domains of `mask` among `places`, and of `currentCpu` (-1: unknown).
CacheDomains cacheDomainsOf(const CpuPlaces& places, const cpu_set_t& mask, int currentCpu);

/// The domains of the calling thread (sched_getaffinity, sched_getcpu).
CacheDomains thisThreadDomains();

/// One line: "L3 domain(s) 0,1, NUMA node(s) 0; on CPU 3 (L3 1, node 0); from hwloc".
std::string describe(const CacheDomains& domains);

namespace detail {
/// From hwloc; false when it is absent or says nothing about L3 caches.
bool cpuPlacesFromHwloc(CpuPlaces* places);
/// From a sysfs tree rooted at `root` ("/sys/devices/system" on a real machine).
CpuPlaces cpuPlacesFromSysfs(const std::string& root);
}  // namespace detail

}  // namespace braid::topo
