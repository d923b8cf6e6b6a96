// Tests of topology/cache_domain.h: the sysfs reader on fake trees written here (with and
// without the L3 id file), the domains of an affinity mask, hwloc against sysfs on this
// machine (where hwloc is loadable), and the calling thread's own domains.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "topology/cache_domain.h"

namespace braid::topo {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text << "\n";
}

// 4 CPUs, two L3 domains (0-1, 2-3), two NUMA nodes (0: 0-1, 1: 2-3); L1 at index0 and L2
// at index2, the L3 at index3. `ids`: whether the caches have an id file.
fs::path fakeSysfs(bool ids) {
  char pattern[] = "/tmp/braid-sysfs-XXXXXX";
  fs::path root = mkdtemp(pattern);
  write(root / "cpu/online", "0-3");
  write(root / "node/online", "0-1");
  write(root / "node/node0/cpulist", "0-1");
  write(root / "node/node1/cpulist", "2-3");
  for (int cpu = 0; cpu < 4; ++cpu) {
    const fs::path cache = root / ("cpu/cpu" + std::to_string(cpu)) / "cache";
    write(cache / "index0/level", "1");
    write(cache / "index1/level", "1");
    write(cache / "index2/level", "2");
    write(cache / "index3/level", "3");
    write(cache / "index3/shared_cpu_list", cpu < 2 ? "0-1" : "2-3");
    if (ids) write(cache / "index3/id", cpu < 2 ? "7" : "9");
  }
  return root;
}

TEST(CacheDomain, SysfsGivesEachCpuItsL3AndNode) {
  for (bool ids : {true, false}) {
    const fs::path root = fakeSysfs(ids);
    const CpuPlaces places = detail::cpuPlacesFromSysfs(root.string());
    fs::remove_all(root);
    EXPECT_EQ(places.source, "sysfs");
    ASSERT_EQ(places.cpus.size(), 4u);
    // With id files the ids; without, the first CPU of the sharing list.
    const int first = ids ? 7 : 0, second = ids ? 9 : 2;
    const int l3[] = {first, first, second, second}, numa[] = {0, 0, 1, 1};
    for (int cpu = 0; cpu < 4; ++cpu) {
      EXPECT_EQ(places.cpus[cpu].cpu, cpu);
      EXPECT_EQ(places.cpus[cpu].l3, l3[cpu]) << "cpu " << cpu << (ids ? " (ids)" : "");
      EXPECT_EQ(places.cpus[cpu].numa, numa[cpu]) << "cpu " << cpu;
    }
  }
}

TEST(CacheDomain, MissingSysfsGivesNothing) {
  const CpuPlaces places = detail::cpuPlacesFromSysfs("/nonexistent/braid");
  EXPECT_TRUE(places.cpus.empty());
  EXPECT_EQ(places.source, "none");
}

TEST(CacheDomain, AMaskTouchesTheDomainsOfItsCpus) {
  const fs::path root = fakeSysfs(true);
  const CpuPlaces places = detail::cpuPlacesFromSysfs(root.string());
  fs::remove_all(root);
  cpu_set_t mask;
  CPU_ZERO(&mask);
  CPU_SET(1, &mask);
  CPU_SET(2, &mask);
  CacheDomains d = cacheDomainsOf(places, mask, 2);
  EXPECT_EQ(d.l3, (std::vector<int>{7, 9}));
  EXPECT_EQ(d.numa, (std::vector<int>{0, 1}));
  EXPECT_EQ(d.cpu, 2);
  EXPECT_EQ(d.cpuL3, 9);
  EXPECT_EQ(d.cpuNuma, 1);
  EXPECT_EQ(describe(d), "L3 domain(s) 7,9, NUMA node(s) 0,1; on CPU 2 (L3 9, node 1); from sysfs");
  CPU_ZERO(&mask);
  CPU_SET(0, &mask);
  d = cacheDomainsOf(places, mask, -1);
  EXPECT_EQ(d.l3, (std::vector<int>{7}));
  EXPECT_EQ(d.numa, (std::vector<int>{0}));
  EXPECT_EQ(d.cpu, -1);
  EXPECT_EQ(describe(d), "L3 domain(s) 7, NUMA node(s) 0; from sysfs");
  CPU_ZERO(&mask);
  d = cacheDomainsOf(places, mask, 42);  // a CPU that is not there
  EXPECT_TRUE(d.l3.empty());
  EXPECT_EQ(d.cpu, -1);
  EXPECT_EQ(describe(d), "L3 domain(s) ?, NUMA node(s) ?; from sysfs");
}

// hwloc and sysfs must split this machine's CPUs into the same L3 domains and NUMA nodes
// (their L3 numbers may differ: hwloc's logical index, the kernel's id).
TEST(CacheDomain, HwlocAgreesWithSysfsHere) {
  CpuPlaces hwloc;
  if (!detail::cpuPlacesFromHwloc(&hwloc)) GTEST_SKIP() << "hwloc not loadable or no L3 level";
  const CpuPlaces sysfs = detail::cpuPlacesFromSysfs("/sys/devices/system");
  EXPECT_EQ(hwloc.source, "hwloc");
  ASSERT_EQ(hwloc.cpus.size(), sysfs.cpus.size());
  std::map<int, int> hwlocToSysfs;
  for (size_t i = 0; i < hwloc.cpus.size(); ++i) {
    EXPECT_EQ(hwloc.cpus[i].cpu, sysfs.cpus[i].cpu);
    EXPECT_EQ(hwloc.cpus[i].numa, sysfs.cpus[i].numa) << "cpu " << hwloc.cpus[i].cpu;
    ASSERT_GE(hwloc.cpus[i].l3, 0);
    auto [it, added] = hwlocToSysfs.emplace(hwloc.cpus[i].l3, sysfs.cpus[i].l3);
    EXPECT_EQ(it->second, sysfs.cpus[i].l3) << "cpu " << hwloc.cpus[i].cpu;
  }
}

TEST(CacheDomain, TheCallingThreadRunsSomewhereKnown) {
  const CacheDomains d = thisThreadDomains();
  if (d.source == "none") GTEST_SKIP() << "no sysfs and no hwloc";
  EXPECT_FALSE(d.numa.empty());
  EXPECT_GE(d.cpu, 0);
  EXPECT_NE(describe(d).find("on CPU"), std::string::npos);
}

}  // namespace
}  // namespace braid::topo
