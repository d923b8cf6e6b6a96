#include "transports/shm/peer_watch.h"

#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace braid::transport::shm {

uint64_t pidNamespaceId() {
  struct stat st;
  if (stat("/proc/self/ns/pid", &st) != 0) return 0;
  return (static_cast<uint64_t>(st.st_dev) << 32) ^ static_cast<uint64_t>(st.st_ino);
}

PeerWatch::PeerWatch(int pid, bool watchable)
    : pid_(pid), watched_(watchable && pid > 0 && pid != getpid()) {
  if (!watched_) return;
#ifdef SYS_pidfd_open
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd_ < 0 && errno == ESRCH) exited_ = true;
#endif
}

PeerWatch::PeerWatch(PeerWatch&& other) noexcept
    : pid_(other.pid_), watched_(other.watched_), pidfd_(other.pidfd_), exited_(other.exited_) {
  other.pidfd_ = -1;
}

PeerWatch::~PeerWatch() {
  if (pidfd_ >= 0) close(pidfd_);
}

bool PeerWatch::exited() {
  if (!watched_ || exited_) return exited_;
  if (pidfd_ >= 0) {
    pollfd pfd{pidfd_, POLLIN, 0};
    exited_ = poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLIN | POLLHUP)) != 0;
  } else {
    exited_ = exitedWithoutPidfd();
  }
  return exited_;
}

bool PeerWatch::exitedWithoutPidfd() const {
  if (kill(pid_, 0) != 0 && errno == ESRCH) return true;
  // kill() succeeds on a zombie; its state letter (after the last ')') says so.
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/stat", pid_);
  FILE* f = fopen(path, "re");
  if (f == nullptr) return false;
  char buf[512];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char* paren = strrchr(buf, ')');
  return paren != nullptr && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

}  // namespace braid::transport::shm
