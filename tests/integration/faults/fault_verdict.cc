#include "integration/faults/fault_verdict.h"

#include <cstdio>
#include <regex>

#include "integration/multiprocess/shm_leaks.h"

namespace braid::testing {

bool namesRank(const std::string& message, int rank) {
  return std::regex_search(message, std::regex("rank " + std::to_string(rank) + "\\b"));
}

std::string unexpectedResult(braidResult_t result) {
  if (result == braidRemoteError || result == braidTimeout) return "";
  return std::string("expected braidRemoteError or braidTimeout, got ") +
         braidGetErrorString(result);
}

int reportRank(int rank, const RankOutcome& outcome, int faultyRank, const std::string& details) {
  std::printf("rank %d: %s after %.3f s: %s%s\n", rank, braidGetErrorString(outcome.result),
              outcome.seconds, outcome.message.c_str(), details.c_str());
  for (const std::string& problem : outcome.problems) {
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, problem.c_str());
  }
  std::fflush(nullptr);
  if (!outcome.problems.empty()) return 1;
  return namesRank(outcome.message, faultyRank) ? kNamedFaultyRank : kNamedOtherRank;
}

bool survivorsPassed(const std::vector<ChildExit>& exits, const std::vector<int>& survivors,
                     int faultyRank) {
  bool passed = true, someoneNamedIt = false;
  for (int r : survivors) {
    const ChildExit& e = exits[r];
    someoneNamedIt |= e.exited && e.code == kNamedFaultyRank;
    if (e.overdue || !e.exited || (e.code != kNamedFaultyRank && e.code != kNamedOtherRank)) {
      std::fprintf(stderr, "FAILED: rank %d ended with code %d signal %d%s\n", r, e.code, e.signal,
                   e.overdue ? " (overdue: killed)" : "");
      passed = false;
    }
  }
  if (!someoneNamedIt) {
    std::fprintf(stderr, "FAILED: no survivor's error names rank %d\n", faultyRank);
    passed = false;
  }
  return passed;
}

bool noShmLeaked(const std::set<std::string>& before) {
  bool none = true;
  for (const std::string& name : leakedShmSegments(before)) {
    std::fprintf(stderr, "FAILED: leaked shared memory /dev/shm/%s\n", name.c_str());
    none = false;
  }
  return none;
}

}  // namespace braid::testing
