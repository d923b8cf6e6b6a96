#include "rank_processes.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <thread>

namespace braid::testing {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bool writeAll(int fd, const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = write(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

bool readAll(int fd, void* data, size_t bytes) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t n = read(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

void closeIfOpen(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

RankProcesses::RankProcesses(int nranks)
    : nranks_(nranks), pids_(nranks, -1), idPipes_(2 * nranks, -1), progressPipes_(2 * nranks, -1) {
  for (int r = 0; r < nranks; ++r) {
    if (pipe(&idPipes_[2 * r]) != 0 || pipe(&progressPipes_[2 * r]) != 0) {
      std::perror("pipe");
    }
  }
}

RankProcesses::~RankProcesses() {
  for (pid_t pid : pids_) {
    if (pid > 0) kill(pid, SIGKILL);  // only children not reaped by waitAll remain here
  }
  for (pid_t pid : pids_) {
    if (pid > 0) waitpid(pid, nullptr, 0);
  }
  for (int& fd : idPipes_) closeIfOpen(fd);
  for (int& fd : progressPipes_) closeIfOpen(fd);
}

bool RankProcesses::start(const std::function<int(int rank)>& childMain) {
  std::fflush(nullptr);  // or buffered output would be written once per child
  for (int r = 0; r < nranks_; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      return false;
    }
    if (pid == 0) {
      // Keep only this rank's ends: the id pipe's read end, the progress pipe's write end.
      for (int k = 0; k < nranks_; ++k) {
        close(idPipes_[2 * k + 1]);
        close(progressPipes_[2 * k]);
        if (k != r) {
          close(idPipes_[2 * k]);
          close(progressPipes_[2 * k + 1]);
        }
      }
      int code = childMain(r);
      std::fflush(nullptr);
      _exit(code);  // no parent atexit handlers or static destructors in the child
    }
    pids_[r] = pid;
  }
  for (int r = 0; r < nranks_; ++r) {
    closeIfOpen(idPipes_[2 * r]);
    closeIfOpen(progressPipes_[2 * r + 1]);
  }
  return true;
}

bool RankProcesses::startWithUniqueId(const std::function<int(int rank)>& childMain) {
  if (!start(childMain)) return false;
  braidUniqueId id;
  return braidGetUniqueId(&id) == braidSuccess && sendUniqueId(id);
}

bool RankProcesses::sendUniqueId(const braidUniqueId& id) {
  bool ok = true;
  for (int r = 0; r < nranks_; ++r) ok = writeAll(idPipes_[2 * r + 1], &id, sizeof id) && ok;
  return ok;
}

bool RankProcesses::receiveUniqueId(int rank, braidUniqueId* id) {
  return readAll(idPipes_[2 * rank], id, sizeof *id);
}

braidComm_t RankProcesses::joinCommunicator(int rank) {
  braidUniqueId id;
  if (!receiveUniqueId(rank, &id)) {
    std::fprintf(stderr, "rank %d: no unique id from the parent\n", rank);
    return nullptr;
  }
  braidComm_t comm = nullptr;
  if (braidCommInitRank(&comm, nranks_, id, rank) != braidSuccess) {
    std::fprintf(stderr, "rank %d: init failed: %s\n", rank, braidGetLastError(nullptr));
    return nullptr;
  }
  return comm;
}

void RankProcesses::release(int rank) {
  char byte = 1;
  writeAll(idPipes_[2 * rank + 1], &byte, 1);
}

bool RankProcesses::awaitRelease(int rank) {
  char byte;
  return readAll(idPipes_[2 * rank], &byte, 1);
}

void RankProcesses::signalProgress(int rank) {
  char byte = 1;
  writeAll(progressPipes_[2 * rank + 1], &byte, 1);
}

bool RankProcesses::waitProgress(const std::vector<int>& ranks, double seconds) {
  const auto start = Clock::now();
  for (int r : ranks) {
    pollfd fd{progressPipes_[2 * r], POLLIN, 0};
    int remainingMs = static_cast<int>((seconds - secondsSince(start)) * 1000);
    char byte;
    if (remainingMs <= 0 || poll(&fd, 1, remainingMs) != 1 || !readAll(fd.fd, &byte, 1)) {
      return false;
    }
  }
  return true;
}

std::vector<ChildExit> RankProcesses::waitAll(double seconds, const std::vector<int>& ranks) {
  std::vector<ChildExit> exits(nranks_);
  std::vector<bool> waited(nranks_, ranks.empty());
  for (int r : ranks) waited[r] = true;
  const auto start = Clock::now();
  int running = 0;
  for (int r = 0; r < nranks_; ++r) running += waited[r] && pids_[r] > 0;
  while (running > 0) {
    const bool overdue = secondsSince(start) > seconds;
    for (int r = 0; r < nranks_; ++r) {
      if (!waited[r] || pids_[r] <= 0) continue;
      if (overdue) {
        kill(pids_[r], SIGKILL);
        exits[r].overdue = true;
      }
      int status = 0;
      pid_t done = waitpid(pids_[r], &status, overdue ? 0 : WNOHANG);
      if (done != pids_[r]) continue;
      exits[r].seconds = secondsSince(start);
      exits[r].exited = WIFEXITED(status);
      if (exits[r].exited) exits[r].code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) exits[r].signal = WTERMSIG(status);
      pids_[r] = -1;
      --running;
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return exits;
}

}  // namespace braid::testing
