// Detection entry point: runs each source in turn (see detect.h).
#include "topology/detect.h"

#include <unistd.h>

#include <fstream>

namespace braid::topo {

uint64_t hostIdentity() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  std::string text = host;
  std::ifstream bootId("/proc/sys/kernel/random/boot_id");
  std::string boot;
  if (bootId >> boot) text += boot;
  uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across processes and builds
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string fileSafe(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool bad = c == ' ' || c == '\t' || c == '#' || c == '=' || c == '\n' || c == '\r';
    out += bad ? '-' : c;
  }
  return out.empty() ? "-" : out;
}

namespace detail {
int cpuNodeFor(const HostKind& host, int numa) {
  int first = -1;
  for (size_t i = 0; i < host.nodes.size(); ++i) {
    if (host.nodes[i].type != NodeType::kCpu) continue;
    if (first < 0) first = static_cast<int>(i);
    if (host.nodes[i].numa == numa) return static_cast<int>(i);
  }
  return first;
}
}  // namespace detail

Detection detectLocalMachine() {
  Detection d;
  HostKind host;
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  host.name = fileSafe(name);
  if (!detail::addFromHwloc(&host, &d.notes)) detail::addCpusFromSysfs(&host, &d.notes);
  detail::linkCpuNodes(&host, &d.notes);
  detail::addNicsFromSysfs(&host, &d.notes);
  detail::addGpus(&host, &d.notes);
  d.graph.hosts.push_back(std::move(host));
  return d;
}

}  // namespace braid::topo
