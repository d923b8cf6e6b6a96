// A rank dies in the middle of a loop of large allreduces (SIGKILLed by the
// parent, or _exit()ing by itself). Every surviving rank must get
// braidRemoteError or braidTimeout within BRAID_TIMEOUT + 5 s, with a last
// error that names a peer and a sticky async error; no process may be left
// behind and no /dev/shm/braid-* segment may outlive the job.
//
//   braid_mp_dead_rank <shm|socket> <nranks> <kill|exit|killall> [tiny]
//
// tiny: 8-byte allreduces instead, which run the exchange on shm
// (comm/exchange_task.h); the loop then has no iteration cap (thousands of
// tiny calls pass before the parent's kill lands), and a survivor that never
// notices is caught by the parent's deadline instead.
//
// killall SIGKILLs every rank mid-loop: nobody is left to clean up, so only
// segments unlinked early (once every peer has mapped them) avoid a leak.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "braid.h"
#include "rank_processes.h"
#include "shm_leaks.h"

using namespace braid::testing;

namespace {

constexpr int kTimeoutSeconds = 5;
constexpr size_t kCount = size_t{1} << 22;  // 16 MiB of float32 per allreduce
constexpr size_t kTinyCount = 2;            // 8 bytes: the tiny path
constexpr int kProgressIteration = 2;       // ranks report after this many allreduces
constexpr int kMaxIterations = 100000;      // a survivor that never notices fails here

int runRank(RankProcesses& processes, int rank, int nranks, int victim, bool victimExits,
            bool tiny) {
  braidUniqueId id;
  if (!processes.receiveUniqueId(rank, &id)) return 2;
  braidComm_t comm = nullptr;
  braidResult_t result = braidCommInitRank(&comm, nranks, id, rank);
  if (result != braidSuccess) {
    std::fprintf(stderr, "rank %d: init failed: %s\n", rank, braidGetLastError(nullptr));
    return 2;
  }
  const size_t count = tiny ? kTinyCount : kCount;
  std::vector<float> buf(count, 1.0f);
  for (int64_t iteration = 0; tiny || iteration < kMaxIterations; ++iteration) {
    if (iteration == kProgressIteration) processes.signalProgress(rank);
    if (victimExits && rank == victim && iteration == kProgressIteration + 1) _exit(3);
    result = braidAllReduce(buf.data(), buf.data(), count, braidFloat32, braidMax, comm, nullptr);
    if (result != braidSuccess) break;
  }
  const std::string message = braidGetLastError(comm);
  std::printf("rank %d: %s: %s\n", rank, braidGetErrorString(result), message.c_str());
  bool ok = true;
  if (result != braidRemoteError && result != braidTimeout) {
    std::fprintf(stderr, "rank %d: expected braidRemoteError or braidTimeout, got %s\n", rank,
                 braidGetErrorString(result));
    ok = false;
  }
  if (!std::regex_search(message, std::regex("(peer|rank) [0-9]+"))) {
    std::fprintf(stderr, "rank %d: the error does not name a peer: \"%s\"\n", rank,
                 message.c_str());
    ok = false;
  }
  braidResult_t async = braidSuccess;
  if (braidCommGetAsyncError(comm, &async) != braidSuccess || async == braidSuccess) {
    std::fprintf(stderr, "rank %d: no sticky async error after the failure\n", rank);
    ok = false;
  }
  braidCommAbort(comm);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s <shm|socket> <nranks> <kill|exit|killall> [tiny]\n", argv[0]);
    return 2;
  }
  const std::string transport = argv[1];
  const int nranks = std::atoi(argv[2]);
  const bool victimExits = std::strcmp(argv[3], "exit") == 0;
  const bool killAll = std::strcmp(argv[3], "killall") == 0;
  const bool tiny = argc > 4 && std::strcmp(argv[4], "tiny") == 0;
  if (nranks < 2) {
    std::fprintf(stderr, "nranks must be at least 2\n");
    return 2;
  }
  const int victim = nranks / 2;
  setenv("BRAID_TRANSPORT", transport.c_str(), 1);
  setenv("BRAID_TIMEOUT", std::to_string(kTimeoutSeconds).c_str(), 1);
  const std::set<std::string> segmentsBefore = braidShmSegments();

  RankProcesses processes(nranks);
  if (!processes.start(
          [&](int rank) { return runRank(processes, rank, nranks, victim, victimExits, tiny); })) {
    return 2;
  }
  braidUniqueId id;
  if (braidGetUniqueId(&id) != braidSuccess) {
    std::fprintf(stderr, "braidGetUniqueId: %s\n", braidGetLastError(nullptr));
    return 2;
  }
  processes.sendUniqueId(id);
  std::vector<int> everyone;
  for (int r = 0; r < nranks; ++r) everyone.push_back(r);
  if (!processes.waitProgress(everyone, 120)) {
    std::fprintf(stderr, "FAILED: the ranks never completed %d allreduces\n", kProgressIteration);
    return 1;
  }
  bool passed = true;
  const double deadline = kTimeoutSeconds + 5;
  if (killAll) {
    for (int r = 0; r < nranks; ++r) kill(processes.pid(r), SIGKILL);
    std::printf("every rank SIGKILLed\n");
    processes.waitAll(deadline);
  } else if (!victimExits) {
    kill(processes.pid(victim), SIGKILL);
  }
  if (!killAll) std::printf("rank %d %s\n", victim, victimExits ? "exits by itself" : "SIGKILLed");
  std::vector<ChildExit> exits = killAll ? std::vector<ChildExit>() : processes.waitAll(deadline);
  for (int r = 0; r < static_cast<int>(exits.size()); ++r) {
    const ChildExit& e = exits[r];
    if (r == victim) {
      bool died = victimExits ? (e.exited && e.code == 3) : e.signal == SIGKILL;
      if (!died) std::fprintf(stderr, "victim rank %d did not die as planned\n", r);
      passed = passed && died;
      continue;
    }
    std::printf("rank %d ended after %.2f s (exit code %d)\n", r, e.seconds, e.code);
    if (e.overdue || e.seconds > deadline) {
      std::fprintf(stderr, "rank %d: still waiting %.0f s after the death (BRAID_TIMEOUT=%d)\n", r,
                   deadline, kTimeoutSeconds);
      passed = false;
    } else if (!e.exited || e.code != 0) {
      passed = false;  // the rank printed why
    }
  }
  for (const std::string& name : leakedShmSegments(segmentsBefore)) {
    std::fprintf(stderr, "leaked shared memory: /dev/shm/%s\n", name.c_str());
    passed = false;
  }
  std::printf("%s\n", passed ? "PASSED" : "FAILED");
  return passed ? 0 : 1;
}
