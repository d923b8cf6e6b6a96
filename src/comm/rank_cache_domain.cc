#include "comm/rank_cache_domain.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "topology/cache_domain.h"

namespace braid {
namespace {

constexpr int kMostPlaces = 4096;

// One override variable: BRAID_L3_DOMAIN ("domain") or BRAID_NUMA_NODE ("node").
struct Override {
  const char* variable;
  const char* noun;
};
constexpr Override kL3{"BRAID_L3_DOMAIN", "domain"};
constexpr Override kNuma{"BRAID_NUMA_NODE", "node"};

Result<int> parsePlace(const Override& o, const std::string& text, const std::string& value) {
  const bool digits = !text.empty() && text.size() <= 4 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoi(text) >= kMostPlaces) {
    return invalidArgument(std::string(o.variable) + "=" + value + ": \"" + text + "\" is not a " +
                           o.noun + " number from 0 to " + std::to_string(kMostPlaces - 1));
  }
  return std::stoi(text);
}

// The forced place of `rank`, or `detected()` when the variable is unset or empty.
template <typename Detect>
Result<int> forcedOr(const Override& o, int rank, int nranks, Detect detected) {
  const char* forced = std::getenv(o.variable);
  if (forced == nullptr || *forced == '\0') return detected();
  const std::string value = forced;
  std::vector<std::string> listed;
  for (size_t begin = 0;;) {
    const size_t comma = value.find(',', begin);
    listed.push_back(value.substr(begin, comma - begin));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  if (listed.size() == 1) return parsePlace(o, listed[0], value);
  if (static_cast<int>(listed.size()) != nranks) {
    return invalidArgument(std::string(o.variable) + "=" + value + " lists " +
                           std::to_string(listed.size()) + " " + o.noun +
                           "s, but the communicator has " + std::to_string(nranks) +
                           " ranks (a list names one " + o.noun + " per rank)");
  }
  // Every entry is checked, so that every rank fails alike on a bad list.
  int mine = -1;
  for (size_t r = 0; r < listed.size(); ++r) {
    BRAID_ASSIGN_OR_RETURN(int place, parsePlace(o, listed[r], value));
    if (static_cast<int>(r) == rank) mine = place;
  }
  return mine;
}

// The domains a rank cannot leave: its pinned CPU's, or those of an affinity mask.
topo::CacheDomains detectedDomains(int pinnedCpu) {
  const topo::CpuPlaces places = topo::cpuPlaces();
  if (pinnedCpu >= 0) {
    topo::CacheDomains pinned;
    for (const topo::CpuPlace& p : places.cpus) {
      if (p.cpu != pinnedCpu) continue;
      if (p.l3 >= 0) pinned.l3.push_back(p.l3);
      if (p.numa >= 0) pinned.numa.push_back(p.numa);
    }
    return pinned;
  }
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return {};
  return topo::cacheDomainsOf(places, mask, -1);
}

int onlyOne(const std::vector<int>& places) { return places.size() == 1 ? places[0] : -1; }

}  // namespace

Result<int> rankCacheDomain(int rank, int nranks, int pinnedCpu) {
  return forcedOr(kL3, rank, nranks, [&] { return onlyOne(detectedDomains(pinnedCpu).l3); });
}

Result<int> rankNumaNode(int rank, int nranks, int pinnedCpu) {
  return forcedOr(kNuma, rank, nranks, [&] { return onlyOne(detectedDomains(pinnedCpu).numa); });
}

}  // namespace braid
