#include "topology/cache_domain.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace braid::topo {
namespace {

std::string readLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; what does not parse is skipped.
std::vector<int> parseCpuList(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream in(text);
  std::string range;
  while (std::getline(in, range, ',')) {
    int first = -1, last = -1;
    char dash = 0;
    std::stringstream item(range);
    if (!(item >> first)) continue;
    if (item >> dash >> last && dash == '-' && last >= first) {
      for (int c = first; c <= last; ++c) cpus.push_back(c);
    } else {
      cpus.push_back(first);
    }
  }
  return cpus;
}

void addUnique(std::vector<int>* list, int value) {
  if (value >= 0 && std::find(list->begin(), list->end(), value) == list->end()) {
    list->push_back(value);
  }
}

std::string join(const std::vector<int>& values) {
  if (values.empty()) return "?";
  std::string text;
  for (int v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
  return text;
}

}  // namespace

namespace detail {

CpuPlaces cpuPlacesFromSysfs(const std::string& root) {
  CpuPlaces places;
  places.source = "sysfs";
  for (int cpu : parseCpuList(readLine(root + "/cpu/online"))) {
    CpuPlace place;
    place.cpu = cpu;
    const std::string cache = root + "/cpu/cpu" + std::to_string(cpu) + "/cache/index";
    for (int index = 0; index < 16; ++index) {
      const std::string level = readLine(cache + std::to_string(index) + "/level");
      if (level.empty()) break;
      if (level != "3") continue;
      const std::string id = readLine(cache + std::to_string(index) + "/id");
      if (!id.empty()) {
        place.l3 = std::atoi(id.c_str());
      } else {  // no id file (older kernels): the first CPU sharing the cache names it
        const std::vector<int> shared =
            parseCpuList(readLine(cache + std::to_string(index) + "/shared_cpu_list"));
        place.l3 = shared.empty() ? -1 : shared.front();
      }
    }
    places.cpus.push_back(place);
  }
  for (int node : parseCpuList(readLine(root + "/node/online"))) {
    for (int cpu :
         parseCpuList(readLine(root + "/node/node" + std::to_string(node) + "/cpulist"))) {
      for (CpuPlace& place : places.cpus) {
        if (place.cpu == cpu) place.numa = node;
      }
    }
  }
  if (places.cpus.empty()) places.source = "none";
  return places;
}

}  // namespace detail

CpuPlaces cpuPlaces() {
  CpuPlaces places;
  if (detail::cpuPlacesFromHwloc(&places)) return places;
  return detail::cpuPlacesFromSysfs("/sys/devices/system");
}

CacheDomains cacheDomainsOf(const CpuPlaces& places, const cpu_set_t& mask, int currentCpu) {
  CacheDomains domains;
  domains.source = places.source;
  for (const CpuPlace& place : places.cpus) {
    if (place.cpu >= 0 && place.cpu < CPU_SETSIZE && CPU_ISSET(place.cpu, &mask)) {
      addUnique(&domains.l3, place.l3);
      addUnique(&domains.numa, place.numa);
    }
    if (place.cpu == currentCpu) {
      domains.cpu = currentCpu;
      domains.cpuL3 = place.l3;
      domains.cpuNuma = place.numa;
    }
  }
  std::sort(domains.l3.begin(), domains.l3.end());
  std::sort(domains.numa.begin(), domains.numa.end());
  return domains;
}

CacheDomains thisThreadDomains() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) CPU_ZERO(&mask);
  return cacheDomainsOf(cpuPlaces(), mask, sched_getcpu());
}

std::string describe(const CacheDomains& d) {
  std::string text = "L3 domain(s) " + join(d.l3) + ", NUMA node(s) " + join(d.numa);
  if (d.cpu >= 0) {
    text += "; on CPU " + std::to_string(d.cpu) + " (L3 " +
            (d.cpuL3 >= 0 ? std::to_string(d.cpuL3) : "?") + ", node " +
            (d.cpuNuma >= 0 ? std::to_string(d.cpuNuma) : "?") + ")";
  }
  return text + "; from " + d.source;
}

}  // namespace braid::topo
