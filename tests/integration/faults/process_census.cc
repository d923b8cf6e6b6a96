#include "process_census.h"

#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

namespace braid::testing {
namespace {

// Numeric entries of a /proc directory, without the descriptor opendir holds.
std::vector<int> numericEntries(const char* path) {
  std::vector<int> out;
  DIR* dir = opendir(path);
  if (dir == nullptr) return out;
  const int own = dirfd(dir);
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    int n = std::atoi(e->d_name);
    if (n != own || std::string(path) != "/proc/self/fd") out.push_back(n);
  }
  closedir(dir);
  return out;
}

}  // namespace

std::string Census::describe() const {
  return std::to_string(fds) + " fds, " + std::to_string(threads) + " threads";
}

Census takeCensus() {
  Census c;
  // The library opens BRAID_DEBUG_FILE at its first log line and keeps it for
  // the life of the process, by design: that descriptor is not a leak.
  const char* logFile = std::getenv("BRAID_DEBUG_FILE");
  for (int fd : numericEntries("/proc/self/fd")) {
    char target[512];
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
    c.fds += !(logFile != nullptr && n > 0 && std::string(target, n) == logFile);
  }
  c.threads = static_cast<int>(numericEntries("/proc/self/task").size());
  return c;
}

long residentKiB(const char* field) {
  const std::string prefix = std::string(field) + ":";
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(prefix, 0) == 0) return std::atol(line.c_str() + prefix.size());
  }
  return -1;
}

Census settle(const Census& before, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  Census now = takeCensus();
  while ((now.fds != before.fds || now.threads != before.threads) &&
         std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    now = takeCensus();
  }
  return now;
}

int cutTcpConnections() {
  int cut = 0;
  for (int fd : numericEntries("/proc/self/fd")) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    int domain = 0, listening = 0;
    socklen_t len = sizeof(int);
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0) continue;
    len = sizeof(int);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0) continue;
    if ((domain != AF_INET && domain != AF_INET6) || listening) continue;
    if (shutdown(fd, SHUT_RDWR) == 0) ++cut;
  }
  return cut;
}

}  // namespace braid::testing
