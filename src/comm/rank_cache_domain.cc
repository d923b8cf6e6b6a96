#include "comm/rank_cache_domain.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "topology/cache_domain.h"

namespace braid {
namespace {

constexpr int kMostDomains = 4096;

Result<int> parseDomain(const std::string& text, const std::string& value) {
  const bool digits = !text.empty() && text.size() <= 4 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoi(text) >= kMostDomains) {
    return invalidArgument("BRAID_L3_DOMAIN=" + value + ": \"" + text +
                           "\" is not a domain number from 0 to " +
                           std::to_string(kMostDomains - 1));
  }
  return std::stoi(text);
}

int detectedDomain(int pinnedCpu) {
  const topo::CpuPlaces places = topo::cpuPlaces();
  if (pinnedCpu >= 0) {
    for (const topo::CpuPlace& p : places.cpus) {
      if (p.cpu == pinnedCpu) return p.l3;
    }
    return -1;
  }
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return -1;
  const topo::CacheDomains domains = topo::cacheDomainsOf(places, mask, -1);
  return domains.l3.size() == 1 ? domains.l3[0] : -1;
}

}  // namespace

Result<int> rankCacheDomain(int rank, int nranks, int pinnedCpu) {
  const char* forced = std::getenv("BRAID_L3_DOMAIN");
  if (forced == nullptr || *forced == '\0') return detectedDomain(pinnedCpu);
  const std::string value = forced;
  std::vector<std::string> listed;
  for (size_t begin = 0;;) {
    const size_t comma = value.find(',', begin);
    listed.push_back(value.substr(begin, comma - begin));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  if (listed.size() == 1) return parseDomain(listed[0], value);
  if (static_cast<int>(listed.size()) != nranks) {
    return invalidArgument("BRAID_L3_DOMAIN=" + value + " lists " + std::to_string(listed.size()) +
                           " domains, but the communicator has " + std::to_string(nranks) +
                           " ranks (a list names one domain per rank)");
  }
  // Every entry is checked, so that every rank fails alike on a bad list.
  int mine = -1;
  for (size_t r = 0; r < listed.size(); ++r) {
    BRAID_ASSIGN_OR_RETURN(int domain, parseDomain(listed[r], value));
    if (static_cast<int>(r) == rank) mine = domain;
  }
  return mine;
}

}  // namespace braid
