// Fault injection across forked ranks: for each collective, one rank of four
// is SIGKILLed before, during or after the collective, SIGSTOPped past
// BRAID_TIMEOUT, or has its TCP connections shut down under it. Every
// survivor must
//   - get braidRemoteError or braidTimeout from the collective within
//     BRAID_TIMEOUT + 5 s (+ 2 s for a stall: the ranks that time out report
//     whom they wait for before they blame the end of the chain), with a last
//     error that names the faulty rank, neighbour or not (the cut-off rank
//     itself only has to name a peer), and a sticky async error; for a stall,
//     a survivor's flight recorder in the log must show it waiting for the
//     stalled rank;
//   - build a communicator without the faulty rank with braidCommShrink and
//     run the same collective and an all-reduce on it, checked against the
//     reference;
//   - braidCommAbort the broken communicator and end with exactly the file
//     descriptors and threads it had before its first braid call;
// and no /dev/shm/braid-* segment may outlive the scenario.
//
//   braid_fault_inject <shm|socket> <kill-before|kill-during|kill-after|stall|cut>
//                      [collective names; default: all]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "braid.h"
#include "integration/faults/fault_verdict.h"
#include "integration/faults/process_census.h"
#include "integration/multiprocess/rank_processes.h"
#include "integration/multiprocess/shm_leaks.h"
#include "support/collective_cases.h"
#include "support/collective_sweep.h"

using namespace braid::testing;

namespace {

using Clock = std::chrono::steady_clock;

enum class Fault { kKillBefore, kKillDuring, kKillAfter, kStall, kCut };

constexpr int kRanks = 4;
constexpr int kProgressIteration = 2;   // looping ranks report after this many calls
constexpr int kMaxIterations = 100000;  // a loop that never fails ends here (and fails)

struct Scenario {
  std::string transport;
  Fault fault;
  Collective collective;
  int victim;
  int timeoutSeconds;
};

bool isKill(Fault f) {
  return f == Fault::kKillBefore || f == Fault::kKillDuring || f == Fault::kKillAfter;
}
bool loops(Fault f) { return f == Fault::kKillDuring || f == Fault::kStall || f == Fault::kCut; }

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Looping faults use buffers large enough that the fault lands inside a call.
CollectiveCase caseFor(Collective collective, bool large) {
  CollectiveCase c;
  c.collective = collective;
  c.type = braidFloat32;
  c.op = braidSum;
  c.count = large ? (size_t{1} << 16) + 3 : 1027;
  c.root = kRanks - 1;
  return c;
}

struct Failure {
  CaseOutcome outcome;
  double seconds = 0;
  std::string problem;  // set when the fault was not provoked as planned
};

// Runs the scenario's calls on `comm` until the fault makes one fail.
Failure provoke(const Scenario& s, RankProcesses& p, braidComm_t comm, int rank) {
  const CollectiveCase c = caseFor(s.collective, loops(s.fault));
  Failure f;
  if (s.fault == Fault::kKillAfter) {
    CaseOutcome first = runCase(comm, c, 1);
    if (!first.ok()) f.problem = "the collective before the kill failed: " + first.failure;
  }
  if (!loops(s.fault)) {
    p.signalProgress(rank);
    if (!p.awaitRelease(rank)) f.problem = "the parent vanished";
    if (!f.problem.empty()) return f;
    auto start = Clock::now();
    f.outcome = runCase(comm, c, 2);
    if (f.outcome.result == braidSuccess) {
      // This rank's part needed nothing from the dead rank (a send that fit in
      // the peer's FIFO, a receive from a live root): it may complete, and
      // must be right; a barrier involves everyone and must fail.
      if (!f.outcome.ok()) f.problem = "wrong result: " + f.outcome.failure;
      std::printf("rank %d: its part of the collective completed; a barrier follows\n", rank);
      start = Clock::now();
      f.outcome = CaseOutcome{braidBarrier(comm, nullptr), ""};
    }
    f.seconds = secondsSince(start);
    return f;
  }
  std::thread cutter;
  for (int i = 0; i < kMaxIterations; ++i) {
    if (i == kProgressIteration) p.signalProgress(rank);
    if (s.fault == Fault::kCut && rank == s.victim && i == kProgressIteration) {
      // Cut once the parent saw every rank in the loop: a rank that ran
      // ahead must not fail the others before they got there.
      cutter = std::thread([&p, rank] {
        if (p.awaitRelease(rank)) std::printf("cut %d TCP connections\n", cutTcpConnections());
      });
    }
    const auto start = Clock::now();
    f.outcome = runCase(comm, c, 10 + i);
    f.seconds = secondsSince(start);
    if (f.outcome.result != braidSuccess) break;
    if (!f.outcome.ok()) {
      f.problem = "wrong result before the fault: " + f.outcome.failure;
      break;
    }
  }
  if (cutter.joinable()) cutter.join();
  if (f.outcome.result == braidSuccess && f.problem.empty()) f.problem = "no call ever failed";
  return f;
}

// The shrunk communicator must work: the same collective and an all-reduce, checked.
std::string checkShrunk(const Scenario& s, braidComm_t comm, int rank) {
  braidComm_t shrunk = nullptr;
  const auto start = Clock::now();
  braidResult_t r = braidCommShrink(comm, &s.victim, 1, &shrunk);
  const double seconds = secondsSince(start);
  if (rank == s.victim) {
    if (r != braidSuccess || shrunk != nullptr) return "an excluded rank did not get NULL";
    return "";
  }
  if (r != braidSuccess || shrunk == nullptr) {
    return std::string("braidCommShrink: ") + braidGetErrorString(r) + ": " +
           braidGetLastError(comm);
  }
  std::string problem;
  int count = 0, newRank = -1;
  braidCommCount(shrunk, &count);
  braidCommUserRank(shrunk, &newRank);
  if (count != kRanks - 1 || newRank != rank - (rank > s.victim ? 1 : 0)) {
    problem = "shrunk to rank " + std::to_string(newRank) + " of " + std::to_string(count);
  }
  CollectiveCase same = caseFor(s.collective, false);
  same.root = 0;
  CollectiveCase allReduce = caseFor(Collective::kAllReduce, false);
  allReduce.type = braidInt64;
  for (const CollectiveCase& c : {same, allReduce}) {
    CaseOutcome o = runCase(shrunk, c, 100);
    if (problem.empty() && !o.ok()) problem = "on the shrunk communicator: " + o.failure;
  }
  std::printf("rank %d: shrunk in %.3f s to rank %d of %d\n", rank, seconds, newRank, count);
  braidCommDestroy(shrunk);
  return problem;
}

int runRank(const Scenario& s, RankProcesses& p, int rank) {
  const Census before = takeCensus();
  if (s.fault == Fault::kStall && rank == (s.victim + 2) % kRanks) {
    // The rank opposite the stalled one (in a ring, one that waits behind a
    // live rank) runs out of time first, so it blames a live rank unless the
    // chain of reported waits leads it on to the stalled one.
    setenv("BRAID_TIMEOUT", std::to_string(s.timeoutSeconds - 1).c_str(), 1);
  }
  braidComm_t comm = p.joinCommunicator(rank);
  if (comm == nullptr) return 2;
  Failure f = provoke(s, p, comm, rank);
  const std::string message = braidGetLastError(comm);
  std::vector<std::string> problems;
  if (!f.problem.empty()) problems.push_back(f.problem);
  if (std::string why = unexpectedResult(f.outcome.result); !why.empty()) problems.push_back(why);
  const bool wasStopped = s.fault == Fault::kStall && rank == s.victim;  // its clock ran on
  const double allowed = s.timeoutSeconds + 5 + (s.fault == Fault::kStall ? 2 : 0);
  if (f.seconds > allowed && !wasStopped) {
    problems.push_back("the failing call took " + std::to_string(f.seconds) + " s");
  }
  const bool namesPeer = std::regex_search(message, std::regex("(peer|rank) [0-9]+"));
  if (!namesPeer) problems.push_back("the error names no peer");
  // The killed, stalled or cut-off rank is the one every other rank must
  // blame, neighbour or not: also those that only heard of the failure from a
  // peer's abort, and those that waited behind a live rank for a stalled one.
  const bool mustNameVictim = rank != s.victim;
  if (mustNameVictim && !namesRank(message, s.victim)) {
    problems.push_back("the error does not name the failed rank " + std::to_string(s.victim));
  }
  braidResult_t async = braidSuccess;
  if (braidCommGetAsyncError(comm, &async) != braidSuccess || async == braidSuccess) {
    problems.push_back("no sticky async error");
  }
  // A stalled rank, once continued, only has to fail and clean up.
  const bool shrinks = !(s.fault == Fault::kStall && rank == s.victim);
  if (shrinks) {
    std::string shrinkProblem = checkShrunk(s, comm, rank);
    if (!shrinkProblem.empty()) problems.push_back(shrinkProblem);
  }
  if (braidCommAbort(comm) != braidSuccess) problems.push_back("braidCommAbort failed");
  const Census after = settle(before, 5);
  if (after.fds != before.fds || after.threads != before.threads) {
    problems.push_back("leaked: " + before.describe() + " before, " + after.describe() + " after");
  }
  return reportRank(rank, {f.outcome.result, f.seconds, message, problems}, s.victim,
                    " [" + before.describe() + " before, " + after.describe() + " after]");
}

bool waitDead(pid_t pid) {
  siginfo_t info;
  return waitid(P_PID, pid, &info, WEXITED | WNOWAIT) == 0;  // leaves it for waitAll to reap
}

// BRAID_DEBUG_FILE of a stall run: every rank's warnings, flight recorders included.
std::string logPath() { return "/tmp/braid-fault-inject-" + std::to_string(getpid()) + ".log"; }

std::streamoff logSize() {
  std::ifstream in(logPath(), std::ios::ate);
  return in ? static_cast<std::streamoff>(in.tellg()) : 0;
}

// A flight recorder line written after `from` in which a survivor waits for `victim`.
std::string waitedForInLog(int victim, std::streamoff from) {
  std::ifstream in(logPath());
  in.seekg(from);
  const std::regex wait("flight recorder, rank ([0-9]+):.*waiting to (send to|receive from) rank " +
                        std::to_string(victim) + "\\b");
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, m, wait) && std::stoi(m[1]) != victim) return line;
  }
  return "";
}

bool runScenario(const Scenario& s) {
  const std::set<std::string> segmentsBefore = braidShmSegments();
  const std::streamoff logOffset = logSize();
  RankProcesses p(kRanks);
  if (!p.startWithUniqueId([&](int rank) { return runRank(s, p, rank); })) return false;
  std::vector<int> everyone, survivors;
  for (int r = 0; r < kRanks; ++r) {
    everyone.push_back(r);
    if (r != s.victim || s.fault == Fault::kCut) survivors.push_back(r);
  }
  if (!p.waitProgress(everyone, 120)) {
    std::fprintf(stderr, "FAILED: the ranks never reached the fault\n");
    return false;
  }
  if (s.fault == Fault::kCut) p.release(s.victim);
  const pid_t victim = p.pid(s.victim);
  if (s.fault == Fault::kKillDuring || s.fault == Fault::kStall) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let them enter a call
  }
  if (isKill(s.fault)) kill(victim, SIGKILL);
  if (s.fault == Fault::kStall) kill(victim, SIGSTOP);
  if (s.fault == Fault::kKillBefore || s.fault == Fault::kKillAfter) {
    waitDead(victim);
    for (int r : survivors) p.release(r);
  }
  // Fault detection, then two shrink phases, each bounded by BRAID_TIMEOUT.
  const double deadline = 3.0 * s.timeoutSeconds + 10;
  std::vector<ChildExit> exits = p.waitAll(deadline, survivors);
  if (s.fault == Fault::kStall) kill(victim, SIGCONT);
  ChildExit victimExit = p.waitAll(deadline, {s.victim})[s.victim];
  bool passed = survivorsPassed(exits, survivors, s.victim);
  if (s.fault == Fault::kStall) {
    // Beyond the errors, the flight recorders in the log must show who was
    // waiting for whom.
    std::string line = waitedForInLog(s.victim, logOffset);
    if (line.empty()) {
      std::fprintf(stderr, "FAILED: no flight recorder line shows a wait for rank %d\n", s.victim);
      passed = false;
    } else {
      std::printf("log: %s\n", line.c_str());
    }
  }
  const bool victimAsPlanned = isKill(s.fault) ? victimExit.signal == SIGKILL
                               : s.fault == Fault::kStall
                                   ? victimExit.exited && victimExit.code != 1
                                   : true;  // kCut: checked with the survivors
  if (!victimAsPlanned) {
    std::fprintf(stderr, "FAILED: the faulty rank %d ended with code %d signal %d\n", s.victim,
                 victimExit.code, victimExit.signal);
    passed = false;
  }
  return noShmLeaked(segmentsBefore) && passed;
}

bool parseFault(const std::string& text, Fault* fault) {
  const std::pair<const char*, Fault> names[] = {{"kill-before", Fault::kKillBefore},
                                                 {"kill-during", Fault::kKillDuring},
                                                 {"kill-after", Fault::kKillAfter},
                                                 {"stall", Fault::kStall},
                                                 {"cut", Fault::kCut}};
  for (const auto& [name, value] : names) {
    if (text == name) *fault = value;
    if (text == name) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  Fault fault;
  if (argc < 3 || !parseFault(argv[2], &fault)) {
    std::fprintf(stderr,
                 "usage: %s <shm|socket> <kill-before|kill-during|kill-after|stall|cut> "
                 "[collective...]\n",
                 argv[0]);
    return 2;
  }
  const std::string transport = argv[1];
  std::vector<Collective> collectives;
  for (Collective c : allCollectives()) {
    bool named = argc == 3;
    for (int i = 3; i < argc; ++i) named |= std::strcmp(argv[i], collectiveName(c)) == 0;
    if (named) collectives.push_back(c);
  }
  // Short for a stall (it must run out); long otherwise, so that passing
  // proves detection, not a timeout.
  const int timeout = fault == Fault::kStall ? 3 : 20;
  setenv("BRAID_TRANSPORT", transport.c_str(), 1);
  setenv("BRAID_TIMEOUT", std::to_string(timeout).c_str(), 1);
  if (fault == Fault::kStall) {
    setenv("BRAID_DEBUG", "WARN", 1);
    setenv("BRAID_DEBUG_FILE", logPath().c_str(), 1);
  }
  int failed = 0, index = 0;
  for (Collective c : collectives) {
    // Every rank takes a turn as the faulty one, the shrink leader (0) and the root included.
    Scenario s{transport, fault, c, index++ % kRanks, timeout};
    const auto start = Clock::now();
    std::printf("=== %s %s %s, faulty rank %d\n", transport.c_str(), argv[2], collectiveName(c),
                s.victim);
    std::fflush(stdout);
    const bool passed = runScenario(s);
    failed += !passed;
    std::printf("=== %s in %.2f s\n", passed ? "passed" : "FAILED", secondsSince(start));
  }
  std::remove(logPath().c_str());
  std::printf("%zu faults injected (%s, %s), %d scenarios failed, 0 allowed\n", collectives.size(),
              transport.c_str(), argv[2], failed);
  return failed == 0 ? 0 : 1;
}
