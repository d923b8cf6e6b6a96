// Launcher: starts the ranks of one job and supervises them to the end.
//
// Life of a job:
//   0. plan    place the ranks on the hosts (host_list.h) and the bootstrap root
//              (root_address.h); without --hosts every rank is on this machine;
//   1. spawn   rank 0..N-1, each in its own process group, with the job's env:
//              ranks of this machine directly, the others through the launcher
//              command (launch_template.h), whose process braidrun supervises
//              as it would the rank;
//   2. run     one poll() loop over the signal pipe (SIGCHLD, SIGINT/TERM/HUP),
//              the ranks' output pipes (--tag-output) and the deadlines;
//   3. stop    on the first failure or the timeout, SIGTERM to every group (a
//              signal sent to braidrun is forwarded as it is instead), then
//              SIGKILL to whatever is left after the grace period;
//   4. finish  once every rank is reaped: SIGKILL to the groups (stray
//              grandchildren), drain the output, remove the job's /dev/shm
//              segments after a failure.
// Invariant: run() returns only after every rank has been reaped, so braidrun
// never leaves a zombie or a running rank behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "braidrun/job_env.h"
#include "braidrun/options.h"
#include "braidrun/output_forwarder.h"
#include "braidrun/signal_pipe.h"
#include "braidrun/spawn.h"

namespace braid::run {

/// Exit statuses that mean something other than "a rank's own status".
inline constexpr int kExitInternalError = 1;
inline constexpr int kExitTimedOut = 124;       // as timeout(1)
inline constexpr int kExitCannotExecute = 127;  // as a shell
inline constexpr std::chrono::seconds kKillGrace{3};

class Launcher {
 public:
  explicit Launcher(Options options);

  /// Runs the job to completion and returns braidrun's exit status: 0, the
  /// first failing rank's status (128+signal if a signal killed it), 124 on
  /// timeout, 127 if the program cannot be started, 128+signal if braidrun
  /// itself was told to stop.
  int run();

 private:
  using Clock = std::chrono::steady_clock;

  struct RankProcess {
    pid_t pid = -1;  // also its process group id
    bool running = false;
  };

  /// Places the ranks (places_, hostIsLocal_) and decides where the root listens.
  bool planJob(RootPlan* plan, std::string* error);
  /// Resolves the program (ranks here) and the launcher (ranks elsewhere).
  bool resolvePrograms(std::string* programPath, std::string* launcherPath, std::string* error);
  void spawnAll(const std::string& programPath, const std::string& launcherPath);
  SpawnRequest requestFor(int rank, const std::string& programPath,
                          const std::string& launcherPath) const;
  bool isLaunched(int rank) const { return !hostIsLocal_[places_[rank].host]; }
  /// "rank 3" on one host, "rank 3 (host b)" on several.
  std::string rankName(int rank) const;
  void supervise();
  void handleSignals();
  void reapRanks();
  void onRankExit(int rank, int status);
  void onUserSignal(int signal);
  void checkDeadlines();
  std::optional<Clock::time_point> nextDeadline() const;

  /// Starts stopping the job (first caller wins: its exit status is kept).
  void stop(int exitStatus);
  void signalAllGroups(int signal);
  int runningCount() const;

  Options options_;
  JobIdentity job_;
  SignalPipe signals_;
  std::unique_ptr<OutputForwarder> forwarder_;  // only with --tag-output
  std::vector<RankProcess> ranks_;
  std::vector<RankPlace> places_;  // per rank
  std::vector<bool> hostIsLocal_;  // per host: started without the launcher

  bool stopping_ = false;
  int exitStatus_ = 0;
  int userSignals_ = 0;                            // a second Ctrl-C skips the grace period
  std::optional<Clock::time_point> jobDeadline_;   // --timeout
  std::optional<Clock::time_point> killDeadline_;  // SIGTERM sent; SIGKILL due
  bool killSent_ = false;
};

}  // namespace braid::run
