// A rank dies inside a collective on the mixed transport: 4 forked ranks on 2
// simulated hosts (BRAID_HOST_ID per process: ranks 0,1 on "a", 2,3 on "b";
// BRAID_TRANSPORT=mixed, so shm inside a host and sockets across) loop a
// large all-reduce (hierarchical: both links carry traffic) until one rank is
// SIGKILLed. Once with the victim a shm peer of rank 0 (rank 1), once a
// socket peer (rank 2). Every survivor must
//   - get braidRemoteError or braidTimeout within BRAID_TIMEOUT + 5 s, with an
//     error that names a rank, and at least one survivor must name the victim;
//   - braidCommAbort cleanly;
// and no /dev/shm/braid-* segment may outlive the scenario. No root needed.
//
//   braid_mixed_fault
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "braid.h"
#include "integration/faults/fault_verdict.h"
#include "integration/multiprocess/rank_processes.h"
#include "integration/multiprocess/shm_leaks.h"
#include "support/collective_cases.h"

using namespace braid::testing;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kRanks = 4;
constexpr int kTimeoutSeconds = 20;  // long, so that passing proves detection, not a timeout
constexpr int kProgressIteration = 2;
constexpr int kMaxIterations = 100000;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int runRank(RankProcesses& p, int rank, int victim) {
  setenv("BRAID_HOST_ID", rank < kRanks / 2 ? "a" : "b", 1);
  braidComm_t comm = p.joinCommunicator(rank);
  if (comm == nullptr) return 2;
  CollectiveCase c;
  c.collective = Collective::kAllReduce;
  c.type = braidFloat32;
  c.op = braidSum;
  c.count = (size_t{1} << 17) + 3;  // above the hierarchical threshold
  CaseOutcome outcome;
  double seconds = 0;
  std::vector<std::string> problems;
  for (int i = 0; i < kMaxIterations; ++i) {
    if (i == kProgressIteration) p.signalProgress(rank);
    const auto start = Clock::now();
    outcome = runCase(comm, c, 10 + i);
    seconds = secondsSince(start);
    if (outcome.result != braidSuccess) break;
    if (!outcome.ok()) {
      problems.push_back("wrong result before the fault: " + outcome.failure);
      break;
    }
  }
  const std::string message = braidGetLastError(comm);
  if (std::string why = unexpectedResult(outcome.result); !why.empty()) problems.push_back(why);
  if (seconds > kTimeoutSeconds + 5) {
    problems.push_back("the failing call took " + std::to_string(seconds) + " s");
  }
  if (!std::regex_search(message, std::regex("rank [0-9]+"))) {
    problems.push_back("the error names no rank");
  }
  if (braidCommAbort(comm) != braidSuccess) problems.push_back("braidCommAbort failed");
  return reportRank(rank, {outcome.result, seconds, message, problems}, victim);
}

bool runScenario(int victim) {
  const std::set<std::string> segmentsBefore = braidShmSegments();
  RankProcesses p(kRanks);
  if (!p.startWithUniqueId([&](int rank) { return runRank(p, rank, victim); })) return false;
  std::vector<int> everyone, survivors;
  for (int r = 0; r < kRanks; ++r) {
    everyone.push_back(r);
    if (r != victim) survivors.push_back(r);
  }
  if (!p.waitProgress(everyone, 120)) {
    std::fprintf(stderr, "FAILED: the ranks never reached the fault\n");
    p.waitAll(0);
    return false;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let them enter a call
  kill(p.pid(victim), SIGKILL);
  std::vector<ChildExit> exits = p.waitAll(2.0 * kTimeoutSeconds + 10, survivors);
  ChildExit victimExit = p.waitAll(10, {victim})[victim];
  bool passed = victimExit.signal == SIGKILL;
  if (!passed) std::fprintf(stderr, "FAILED: the victim was not killed\n");
  passed = survivorsPassed(exits, survivors, victim) && passed;
  return noShmLeaked(segmentsBefore) && passed;
}

}  // namespace

int main() {
  setenv("BRAID_TRANSPORT", "mixed", 1);
  setenv("BRAID_TIMEOUT", std::to_string(kTimeoutSeconds).c_str(), 1);
  int failed = 0;
  // Rank 1 shares rank 0's host (shm); rank 2 is on the other host (socket).
  for (int victim : {1, 2}) {
    const auto start = Clock::now();
    std::printf("=== mixed transport, 2 hosts x 2 ranks, rank %d killed in an all-reduce\n",
                victim);
    std::fflush(stdout);
    const bool passed = runScenario(victim);
    failed += !passed;
    std::printf("=== %s in %.2f s\n", passed ? "passed" : "FAILED", secondsSince(start));
  }
  std::printf("%d scenarios failed, 0 allowed\n", failed);
  return failed == 0 ? 0 : 1;
}
