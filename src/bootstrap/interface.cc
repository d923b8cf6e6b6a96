#include "bootstrap/interface.h"

#include <ifaddrs.h>
#include <net/if.h>

#include <cstring>

namespace braid::bootstrap {
namespace {

bool nameMatches(const char* name, const std::string& pattern) {
  if (pattern.empty()) return true;
  if (pattern[0] == '=' || pattern[0] == '^') return pattern.compare(1, std::string::npos, name) == 0;
  return std::strncmp(name, pattern.c_str(), pattern.size()) == 0;
}

}  // namespace

Result<SockAddr> pickInterface(const std::string& ifnamePrefix) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return systemError("getifaddrs", errno);
  SockAddr best, loopback;
  bool haveBest = false, haveLoopback = false;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || !(i->ifa_flags & IFF_UP)) continue;
    int family = i->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    if (!nameMatches(i->ifa_name, ifnamePrefix)) continue;
    if (family == AF_INET6 &&
        IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr)) {
      continue;  // link-local needs a scope id; not worth it for a bootstrap
    }
    SockAddr a;
    a.length = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    std::memcpy(&a.storage, i->ifa_addr, a.length);
    bool isLoopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
    if (isLoopback && ifnamePrefix.empty()) {
      if (!haveLoopback || family == AF_INET) loopback = a, haveLoopback = true;
      continue;
    }
    // Prefer IPv4 when an interface has both.
    if (!haveBest || (best.storage.ss_family == AF_INET6 && family == AF_INET)) {
      best = a;
      haveBest = true;
    }
  }
  ::freeifaddrs(list);
  if (haveBest) return best;
  if (!ifnamePrefix.empty()) {
    return invalidArgument("BRAID_SOCKET_IFNAME='" + ifnamePrefix + "' matches no up interface");
  }
  if (haveLoopback) return loopback;
  return resolve("127.0.0.1", 0);
}

}  // namespace braid::bootstrap
