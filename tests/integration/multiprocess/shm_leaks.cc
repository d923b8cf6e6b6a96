#include "shm_leaks.h"

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

namespace braid::testing {
namespace {

std::vector<std::string> listDirectory(const std::string& path) {
  std::vector<std::string> names;
  if (DIR* dir = opendir(path.c_str())) {
    while (dirent* entry = readdir(dir)) names.emplace_back(entry->d_name);
    closedir(dir);
  }
  return names;
}

bool isNumber(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// Every /dev/shm path some process has open (fd) or mapped (maps).
std::set<std::string> heldShmPaths() {
  std::set<std::string> held;
  for (const std::string& pid : listDirectory("/proc")) {
    if (!isNumber(pid)) continue;
    const std::string fdDir = "/proc/" + pid + "/fd";
    for (const std::string& fd : listDirectory(fdDir)) {
      char target[512];
      ssize_t n = readlink((fdDir + "/" + fd).c_str(), target, sizeof target - 1);
      if (n > 0) held.emplace(target, n);
    }
    std::ifstream maps("/proc/" + pid + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
      size_t at = line.find("/dev/shm/");
      if (at != std::string::npos) held.insert(line.substr(at, line.find(" (deleted)") - at));
    }
  }
  return held;
}

}  // namespace

std::set<std::string> braidShmSegments() {
  std::set<std::string> segments;
  for (const std::string& name : listDirectory("/dev/shm")) {
    if (name.rfind("braid-", 0) == 0) segments.insert(name);
  }
  return segments;
}

std::vector<std::string> leakedShmSegments(const std::set<std::string>& before, int looks) {
  std::set<std::string> suspects;
  for (const std::string& name : braidShmSegments()) {
    if (!before.count(name)) suspects.insert(name);
  }
  for (int look = 0; look < looks && !suspects.empty(); ++look) {
    if (look > 0) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::set<std::string> present = braidShmSegments();
    std::set<std::string> held = heldShmPaths();
    for (auto it = suspects.begin(); it != suspects.end();) {
      bool gone = !present.count(*it);
      bool inUse = held.count("/dev/shm/" + *it) > 0;
      it = gone || inUse ? suspects.erase(it) : std::next(it);
    }
  }
  return {suspects.begin(), suspects.end()};
}

}  // namespace braid::testing
