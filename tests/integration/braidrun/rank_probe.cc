// rank_probe: a stand-in rank for braidrun's tests.
//
// Runs its arguments as a little script of actions, in order:
//   env                  print one line with every launcher variable
//   show VAR             print "probe rank=R VAR=<value>"
//   pidfile DIR          write this process's pid to DIR/rank<R>.pid
//   child DIR            fork a grandchild that writes DIR/child<R>.pid and sleeps
//   partial-lines        write half a line to stdout and stderr, pause, finish them
//   unterminated         write a last stdout line without '\n'
//   shm                  create /dev/shm/braid-<BRAID_JOB_TAG>-probe<R>
//   wait-files DIR N     wait (up to 10 s) until DIR holds N files ending in ".pid"
//   ignore-term          ignore SIGTERM from now on
//   sleep S              sleep S seconds (fractions allowed)
//   exit-on R CODE       exit with CODE if this is rank R
//   signal-on R SIG      raise signal SIG if this is rank R
//   marker WORD          nothing; puts WORD on the command line for process searches
// Output goes through write(2) directly, so each call is exactly one write.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "<unset>";
}

void writeAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

void sleepSeconds(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

// Written under a temporary name and renamed, so that a reader never sees an
// empty pid file.
void writePidFile(const std::string& path) {
  std::string temporary = path + ".tmp";
  FILE* file = std::fopen(temporary.c_str(), "w");
  if (file == nullptr) return;
  std::fprintf(file, "%d\n", static_cast<int>(::getpid()));
  std::fclose(file);
  std::rename(temporary.c_str(), path.c_str());
}

void printEnv() {
  std::string line = "probe pid=" + std::to_string(::getpid());
  for (const char* name : {"BRAID_RANK", "BRAID_NRANKS", "BRAID_LOCAL_RANK", "BRAID_LOCAL_SIZE",
                           "BRAID_ROOT", "BRAID_SECRET", "BRAID_JOB_TAG", "RANK", "WORLD_SIZE",
                           "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) {
    line += std::string(" ") + name + "=" + env(name);
  }
  writeAll(STDOUT_FILENO, line + "\n");
}

int countPidFiles(const std::string& dir) {
  int count = 0;
  if (DIR* handle = ::opendir(dir.c_str())) {
    while (dirent* entry = ::readdir(handle)) {
      std::string name = entry->d_name;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".pid") == 0) ++count;
    }
    ::closedir(handle);
  }
  return count;
}

// Lets a test make "every rank has started" a fact before one of them fails,
// instead of hoping that a fixed sleep was long enough.
void waitForPidFiles(const std::string& dir, int count) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (countPidFiles(dir) < count && std::chrono::steady_clock::now() < deadline) {
    sleepSeconds(0.01);
  }
}

[[noreturn]] void usage(const char* what) {
  std::fprintf(stderr, "rank_probe: bad arguments near '%s'\n", what);
  std::exit(64);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string rank = env("BRAID_RANK");
  for (int i = 1; i < argc; ++i) {
    std::string action = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(action.c_str());
      return argv[++i];
    };
    if (action == "env") {
      printEnv();
    } else if (action == "show") {
      std::string name = next();
      writeAll(STDOUT_FILENO, "probe rank=" + rank + " " + name + "=" + env(name.c_str()) + "\n");
    } else if (action == "pidfile") {
      writePidFile(next() + "/rank" + rank + ".pid");
    } else if (action == "child") {
      std::string path = next() + "/child" + rank + ".pid";
      if (::fork() == 0) {
        writePidFile(path);
        sleepSeconds(60);
        _exit(0);
      }
    } else if (action == "partial-lines") {
      writeAll(STDOUT_FILENO, "out-first-half ");
      writeAll(STDERR_FILENO, "err-first-half ");
      sleepSeconds(0.05);
      writeAll(STDOUT_FILENO, "out-second-half\n");
      writeAll(STDERR_FILENO, "err-second-half\n");
    } else if (action == "unterminated") {
      writeAll(STDOUT_FILENO, "unterminated-last-line");
    } else if (action == "shm") {
      std::string path = "/dev/shm/braid-" + env("BRAID_JOB_TAG") + "-probe" + rank;
      int fd = ::open(path.c_str(), O_CREAT | O_RDWR, 0600);
      if (fd >= 0) ::close(fd);
    } else if (action == "wait-files") {
      std::string dir = next();
      waitForPidFiles(dir, std::atoi(next().c_str()));
    } else if (action == "ignore-term") {
      ::signal(SIGTERM, SIG_IGN);
    } else if (action == "sleep") {
      sleepSeconds(std::atof(next().c_str()));
    } else if (action == "exit-on") {
      std::string who = next();
      int code = std::atoi(next().c_str());
      if (who == rank) return code;
    } else if (action == "signal-on") {
      std::string who = next();
      int signal = std::atoi(next().c_str());
      if (who == rank) ::raise(signal);
    } else if (action == "marker") {
      next();
    } else {
      usage(action.c_str());
    }
  }
  return 0;
}
