#include "comm/host_identity.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <unordered_map>

namespace braid {
namespace {

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string detectedMachine() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  std::string text = host;
  std::ifstream bootId("/proc/sys/kernel/random/boot_id");
  std::string boot;
  if (bootId >> boot) text += "/" + boot;
  return text;
}

// The machine + the network namespace: see the header for why both.
std::string detectedHost() {
  std::string text = detectedMachine();
  struct stat ns = {};
  if (::stat("/proc/self/ns/net", &ns) == 0) {
    text += "/netns:" + std::to_string(ns.st_dev) + ":" + std::to_string(ns.st_ino);
  }
  return text;
}

std::vector<std::string> splitCommas(const std::string& text) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (true) {
    size_t comma = text.find(',', begin);
    parts.push_back(text.substr(begin, comma - begin));
    if (comma == std::string::npos) return parts;
    begin = comma + 1;
  }
}

}  // namespace

Result<uint64_t> hostIdentity(int rank, int nranks) {
  const char* forced = std::getenv("BRAID_HOST_ID");
  if (forced == nullptr || *forced == '\0') return fnv1a(detectedHost());
  std::string value = forced;
  if (value.find(',') == std::string::npos) return fnv1a("BRAID_HOST_ID:" + value);
  std::vector<std::string> names = splitCommas(value);
  if (static_cast<int>(names.size()) != nranks) {
    return invalidArgument("BRAID_HOST_ID=" + value + " lists " + std::to_string(names.size()) +
                           " hosts, but the communicator has " + std::to_string(nranks) +
                           " ranks (a list names one host per rank)");
  }
  const std::string& mine = names[static_cast<size_t>(rank)];
  if (mine.empty()) {
    return invalidArgument("BRAID_HOST_ID=" + value + " names no host for rank " +
                           std::to_string(rank));
  }
  return fnv1a("BRAID_HOST_ID:" + mine);
}

uint64_t machineIdentity() { return fnv1a(detectedMachine()); }

std::vector<int> hostIndices(const std::vector<uint64_t>& identities) {
  std::unordered_map<uint64_t, int> index;
  std::vector<int> hosts;
  hosts.reserve(identities.size());
  for (uint64_t id : identities) {
    auto [it, inserted] = index.emplace(id, static_cast<int>(index.size()));
    hosts.push_back(it->second);
  }
  return hosts;
}

}  // namespace braid
