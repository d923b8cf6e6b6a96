#include "braidrun/launcher.h"

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "braidrun/launch_template.h"
#include "braidrun/root_address.h"
#include "braidrun/spawn.h"

namespace braid::run {
namespace {

// One write() per message, so that braidrun's own lines never land in the
// middle of a rank's line on a shared stderr.
void report(const std::string& message) {
  std::string line = "braidrun: " + message + "\n";
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
}

std::string describeSignal(int signal) {
  const char* name = ::strsignal(signal);
  return "signal " + std::to_string(signal) +
         (name != nullptr ? " (" + std::string(name) + ")" : "");
}

std::string formatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", seconds);
  return text;
}

// --tag-output holds two pipe ends per rank; 1024 ranks need more descriptors
// than the usual soft limit of 1024, and the hard limit is ours to use. Failing
// here, before any rank starts, beats failing at rank 500 with EMFILE.
bool raiseDescriptorLimit(int nranks, std::string* error) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return true;  // let pipe2 say what is wrong
  rlim_t wanted = static_cast<rlim_t>(nranks) * 2 + 64;
  if (limit.rlim_cur >= wanted) return true;
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < wanted) {
    *error = "--tag-output with " + std::to_string(nranks) + " ranks needs " +
             std::to_string(wanted) + " open files, but the hard limit is " +
             std::to_string(limit.rlim_max) + " (see ulimit -n)";
    return false;
  }
  limit.rlim_cur = wanted;
  ::setrlimit(RLIMIT_NOFILE, &limit);  // a refusal surfaces as EMFILE from pipe2
  return true;
}

}  // namespace

Launcher::Launcher(Options options) : options_(std::move(options)) {}

int Launcher::run() {
  std::string error;
  RootPlan plan;
  if (!planJob(&plan, &error) || !signals_.install(&error) ||
      !makeJobIdentity(&job_, plan, &error)) {
    report(error);
    return kExitInternalError;
  }
  std::string programPath, launcherPath;
  if (!resolvePrograms(&programPath, &launcherPath, &error)) {
    report(error);
    return kExitCannotExecute;
  }
  if (options_.tagOutput) {
    if (!raiseDescriptorLimit(options_.nranks, &error)) {
      report(error);
      return kExitInternalError;
    }
    forwarder_ = std::make_unique<OutputForwarder>();
  }
  if (options_.timeoutSeconds > 0) {
    jobDeadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(options_.timeoutSeconds));
  }

  spawnAll(programPath, launcherPath);
  supervise();

  // Every rank is reaped, but their process groups may still hold children
  // they left behind; those die with the job. (A group id is not reused while
  // any member lives, so this reaches only the job's own processes.)
  signalAllGroups(SIGKILL);
  if (forwarder_) forwarder_->drain(Clock::now() + std::chrono::seconds(1));
  if (exitStatus_ != 0) {
    int removed = removeJobShmSegments(job_.tag);
    if (removed > 0) {
      report("removed " + std::to_string(removed) + " leftover /dev/shm/braid-" + job_.tag +
             "* segment(s)");
    }
  }
  return exitStatus_;
}

bool Launcher::planJob(RootPlan* plan, std::string* error) {
  if (options_.hosts.empty()) options_.hosts = {HostSlots{"localhost", options_.nranks}};
  places_ = placeRanks(options_.hosts, options_.mapBy);
  const std::string* firstRemote = nullptr;
  for (const HostSlots& host : options_.hosts) {
    hostIsLocal_.push_back(isLocalHost(host.name));
    if (!hostIsLocal_.back() && firstRemote == nullptr) firstRemote = &host.name;
  }
  const int rootHost = places_[0].host;
  plan->port = options_.rootPort;
  plan->listenHere = hostIsLocal_[rootHost];
  if (firstRemote == nullptr) {
    // One machine: loopback only, unless the user names an address.
    if (!options_.rootAddress.empty()) {
      plan->advertised = options_.rootAddress;
      plan->bindAddress = "0.0.0.0";
    }
    return true;
  }
  if (!plan->listenHere) {
    // That host's rank 0 binds the port; "user@host" is for ssh, the address is the host.
    const std::string& name = options_.hosts[rootHost].name;
    plan->advertised =
        options_.rootAddress.empty() ? name.substr(name.find('@') + 1) : options_.rootAddress;
    return true;
  }
  plan->bindAddress = "0.0.0.0";  // the other hosts must reach it
  plan->advertised = options_.rootAddress;
  if (plan->advertised.empty()) {
    const std::string host = firstRemote->substr(firstRemote->find('@') + 1);
    if (!routeSourceAddress(host, &plan->advertised, error)) {
      *error += "; name the address other hosts reach this machine at with --root-addr";
      return false;
    }
  }
  return true;
}

bool Launcher::resolvePrograms(std::string* programPath, std::string* launcherPath,
                               std::string* error) {
  bool anyHere = false, anyLaunched = false;
  for (int rank = 0; rank < options_.nranks; ++rank) {
    (isLaunched(rank) ? anyLaunched : anyHere) = true;
  }
  // A launched rank's program is found on its own host, by the launcher's PATH there.
  if (anyHere && !resolveProgram(options_.command[0], programPath, error)) return false;
  if (anyLaunched && !resolveProgram(options_.launch.words[0], launcherPath, error)) {
    *error = "--launcher: " + *error;
    return false;
  }
  return true;
}

std::string Launcher::rankName(int rank) const {
  std::string name = "rank " + std::to_string(rank);
  if (options_.hosts.size() > 1) name += " (host " + options_.hosts[places_[rank].host].name + ")";
  return name;
}

SpawnRequest Launcher::requestFor(int rank, const std::string& programPath,
                                  const std::string& launcherPath) const {
  const RankPlace& place = places_[rank];
  SpawnRequest request;
  if (isLaunched(rank)) {
    request.programPath = launcherPath;
    request.argv =
        launchArgv(options_.launch, options_.hosts[place.host].name,
                   launchedRankEnvironment(job_, rank, options_.nranks, place, options_.extraEnv),
                   options_.command);
    request.env = launcherProcessEnvironment();
  } else {
    request.programPath = programPath;
    request.argv = options_.command;
    request.env = rankEnvironment(job_, rank, options_.nranks, place, options_.extraEnv);
    if (rank == 0 && job_.rootListener != nullptr) request.inheritFd = job_.rootListener->get();
  }
  return request;
}

void Launcher::spawnAll(const std::string& programPath, const std::string& launcherPath) {
  ranks_.resize(options_.nranks);
  // Only rank 0 may read braidrun's stdin, and only when it is a pipe or a
  // file: the ranks are not in the terminal's foreground group, so reading a
  // terminal would stop them with SIGTTIN.
  bool stdinForRank0 = !::isatty(STDIN_FILENO);
  for (int rank = 0; rank < options_.nranks && !stopping_; ++rank) {
    SpawnRequest request = requestFor(rank, programPath, launcherPath);
    request.inheritStdin = rank == 0 && stdinForRank0;
    request.signals = &signals_;
    ChildOutput output;  // braidrun's copies of the write ends close at scope exit
    std::string error;
    if (forwarder_) {
      if (!forwarder_->openRank(rank, &output, &error)) {
        report(error);
        stop(kExitInternalError);
        return;
      }
      request.output = &output;
    }
    signals_.blockSignals();
    SpawnResult spawned = spawnRank(request);
    signals_.unblockSignals();
    if (spawned.pid < 0) {
      report(rankName(rank) + ": " + spawned.error);
      stop(spawned.execFailed ? kExitCannotExecute : kExitInternalError);
      return;
    }
    ranks_[rank] = RankProcess{spawned.pid, true};
    // Rank 0 owns the root's socket now; a copy left here would keep the port
    // listening after rank 0 is done with it.
    if (rank == 0 && job_.rootListener != nullptr) job_.rootListener->reset();
    // A Ctrl-C while 1024 ranks start should not wait for the last one.
    handleSignals();
  }
}

void Launcher::supervise() {
  std::vector<pollfd> fds;
  while (runningCount() > 0) {
    fds.clear();
    fds.push_back(pollfd{signals_.fd(), POLLIN, 0});
    if (forwarder_) forwarder_->addPollFds(&fds);

    int timeoutMs = -1;
    if (auto deadline = nextDeadline()) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
      timeoutMs = static_cast<int>(std::max<int64_t>(0, left.count()));
    }
    int ready = ::poll(fds.data(), fds.size(), timeoutMs);
    if (ready < 0 && errno != EINTR) {
      // poll() cannot fail for a valid fd set, but if it ever does the job must
      // still end: stop it and keep reaping by polling the (non-blocking)
      // signal pipe on a short sleep.
      report(std::string("poll failed: ") + std::strerror(errno));
      stop(kExitInternalError);
      ::usleep(10000);
      handleSignals();
    }
    if (ready > 0) {
      if (fds[0].revents & POLLIN) handleSignals();
      if (forwarder_) forwarder_->service(fds.data() + 1, fds.size() - 1);
    }
    checkDeadlines();
  }
}

void Launcher::handleSignals() {
  for (int signal : signals_.takePending()) {
    if (signal == SIGCHLD) {
      reapRanks();
    } else {
      onUserSignal(signal);
    }
  }
}

void Launcher::reapRanks() {
  // One SIGCHLD may stand for several exits, so every running rank is asked.
  // Waiting on specific pids never reaps anything that is not a rank.
  for (int rank = 0; rank < static_cast<int>(ranks_.size()); ++rank) {
    RankProcess& process = ranks_[rank];
    if (!process.running) continue;
    int status = 0;
    pid_t pid;
    do {
      pid = ::waitpid(process.pid, &status, WNOHANG);
    } while (pid < 0 && errno == EINTR);
    if (pid == 0) continue;
    process.running = false;
    if (pid > 0) onRankExit(rank, status);
  }
}

void Launcher::onRankExit(int rank, int status) {
  bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  // Once stopping, exits are the consequence of braidrun's own signals.
  if (clean || stopping_) return;
  std::string how;
  int exitStatus;
  if (WIFSIGNALED(status)) {
    how = "was killed by " + describeSignal(WTERMSIG(status));
    exitStatus = 128 + WTERMSIG(status);
  } else {
    how = "exited with status " + std::to_string(WEXITSTATUS(status));
    exitStatus = WEXITSTATUS(status);
  }
  // ssh exits 255 for its own failures (no route, refused, authentication).
  if (isLaunched(rank) && WIFEXITED(status) && WEXITSTATUS(status) == 255) {
    how += " (255: the launcher itself may have failed)";
  }
  report(rankName(rank) + " " + how + "; stopping the other " + std::to_string(runningCount()) +
         " rank(s)");
  stop(exitStatus);
}

void Launcher::onUserSignal(int signal) {
  ++userSignals_;
  if (userSignals_ == 1) {
    report("received " + describeSignal(signal) + "; forwarding it to all ranks");
    // Forward the signal itself rather than SIGTERM: a rank may treat SIGINT
    // differently (Python raises KeyboardInterrupt and unwinds).
    signalAllGroups(signal);
    if (!stopping_) {
      stopping_ = true;
      exitStatus_ = 128 + signal;
      killDeadline_ = Clock::now() + kKillGrace;
    }
    return;
  }
  if (!killSent_) {
    report("received another signal, " + describeSignal(signal) + "; killing all ranks now");
    signalAllGroups(SIGKILL);
    killSent_ = true;
  }
}

void Launcher::checkDeadlines() {
  Clock::time_point now = Clock::now();
  if (jobDeadline_ && now >= *jobDeadline_ && !stopping_) {
    report("timed out after " + formatSeconds(options_.timeoutSeconds) + " s; stopping " +
           std::to_string(runningCount()) + " rank(s)");
    stop(kExitTimedOut);
  }
  if (killDeadline_ && now >= *killDeadline_ && !killSent_) {
    int left = runningCount();
    if (left > 0) {
      report(std::to_string(left) + " rank(s) still running " + std::to_string(kKillGrace.count()) +
             " s after SIGTERM; sending SIGKILL");
    }
    signalAllGroups(SIGKILL);
    killSent_ = true;
  }
}

std::optional<Launcher::Clock::time_point> Launcher::nextDeadline() const {
  std::optional<Clock::time_point> next;
  if (jobDeadline_ && !stopping_) next = jobDeadline_;
  if (killDeadline_ && !killSent_ && (!next || *killDeadline_ < *next)) next = killDeadline_;
  return next;
}

void Launcher::stop(int exitStatus) {
  if (stopping_) return;
  stopping_ = true;
  exitStatus_ = exitStatus;
  signalAllGroups(SIGTERM);
  killDeadline_ = Clock::now() + kKillGrace;
}

void Launcher::signalAllGroups(int signal) {
  // Reaped ranks are included: their groups may still hold the children they
  // started. ESRCH (an empty group) is expected and ignored.
  for (const RankProcess& process : ranks_) {
    if (process.pid > 0) ::kill(-process.pid, signal);
  }
}

int Launcher::runningCount() const {
  int count = 0;
  for (const RankProcess& process : ranks_) count += process.running ? 1 : 0;
  return count;
}

}  // namespace braid::run
