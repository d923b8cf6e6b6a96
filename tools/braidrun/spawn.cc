#include "braidrun/spawn.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#ifdef __linux__
#include <sys/prctl.h>
#endif

namespace braid::run {
namespace {

std::vector<char*> cStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Runs in the child between fork and exec. braidrun is single-threaded, so
// anything would be safe here; the child still keeps to plain system calls
// (no allocation) so that it stays correct if a thread is ever added.
[[noreturn]] void execChild(const SpawnRequest& request, char* const* argv, char* const* envp,
                            int errorPipe, pid_t launcherPid) {
  // A group of its own: signals are forwarded with kill(-pgid) so that they
  // reach the rank's own children too, and a Ctrl-C on the terminal reaches
  // braidrun alone, which forwards it exactly once.
  ::setpgid(0, 0);
#ifdef __linux__
  // If braidrun itself is SIGKILLed it cannot clean up; the kernel does.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != launcherPid) ::_exit(127);  // braidrun died before prctl
#else
  (void)launcherPid;
#endif
  if (request.output != nullptr) {
    ::dup2(request.output->stdoutWrite.get(), STDOUT_FILENO);
    ::dup2(request.output->stderrWrite.get(), STDERR_FILENO);
  }
  if (!request.inheritStdin) {
    int devNull = ::open("/dev/null", O_RDONLY);
    if (devNull >= 0) {
      ::dup2(devNull, STDIN_FILENO);
      ::close(devNull);
    }
  }
  if (request.signals != nullptr) request.signals->restoreInChild();
  if (request.inheritFd >= 0) ::fcntl(request.inheritFd, F_SETFD, 0);
  ::execve(request.programPath.c_str(), argv, envp);
  int err = errno;
  [[maybe_unused]] ssize_t n = ::write(errorPipe, &err, sizeof(err));
  ::_exit(127);
}

}  // namespace

SpawnResult spawnRank(const SpawnRequest& request) {
  SpawnResult result;
  std::vector<char*> argv = cStrings(request.argv);
  std::vector<char*> envp = cStrings(request.env);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return result;
  }
  UniqueFd errorRead(fds[0]), errorWrite(fds[1]);

  pid_t launcherPid = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    result.error = std::string("fork failed: ") + std::strerror(errno);
    return result;
  }
  if (pid == 0) execChild(request, argv.data(), envp.data(), errorWrite.get(), launcherPid);

  // Also set the group here: whichever of parent and child runs first, the
  // group exists before braidrun could need to signal it.
  ::setpgid(pid, pid);
  errorWrite.reset();

  // End of file means exec succeeded (the pipe was close-on-exec); four
  // bytes are the errno of a failed exec.
  int execErrno = 0;
  ssize_t n;
  do {
    n = ::read(errorRead.get(), &execErrno, sizeof(execErrno));
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof(execErrno))) {
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.execFailed = true;
    result.error = "cannot execute '" + request.programPath + "': " + std::strerror(execErrno);
    return result;
  }
  result.pid = pid;
  return result;
}

bool resolveProgram(const std::string& program, std::string* path, std::string* error) {
  if (program.find('/') != std::string::npos) {
    // Let exec report what is wrong with an explicit path: it knows best.
    *path = program;
    return true;
  }
  const char* searchPath = std::getenv("PATH");
  std::string dirs = searchPath != nullptr ? searchPath : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    struct stat info;
    if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      *path = candidate;
      return true;
    }
    start = end + 1;
  }
  *error = "cannot find program '" + program + "' in PATH";
  return false;
}

}  // namespace braid::run
