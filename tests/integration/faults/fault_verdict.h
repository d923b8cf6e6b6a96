// The verdict of a fault scenario (tests/integration/faults/fault_inject.cc,
// tests/multihost/mixed_fault.cc): what a survivor rank checks and prints about
// the call the fault made fail, the exit code it reports with, and what the
// parent concludes from the ranks' exits and /dev/shm afterwards.
//
// A survivor that passed exits with kNamedFaultyRank or kNamedOtherRank; the
// parent requires every survivor to pass and at least one to have named the
// faulty rank (a rank may only have heard of the failure from another peer).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "braid.h"
#include "integration/multiprocess/rank_processes.h"

namespace braid::testing {

/// Exit codes of a survivor that passed: whether its error named the faulty rank.
constexpr int kNamedFaultyRank = 0;
constexpr int kNamedOtherRank = 10;

/// Whether `message` names rank `rank` ("rank 3", and not as the start of "rank 31").
bool namesRank(const std::string& message, int rank);

/// "" when `result` is how a call must fail after a fault (braidRemoteError or
/// braidTimeout), else the problem.
std::string unexpectedResult(braidResult_t result);

/// What a survivor saw: the failed call's result, how long it took, the communicator's
/// last error and the problems found (empty: passed).
struct RankOutcome {
  braidResult_t result = braidSuccess;
  double seconds = 0;
  std::string message;
  std::vector<std::string> problems;
};

/// A survivor's end: prints "rank R: <result> after S s: <message><details>", then a FAILED
/// line per problem on stderr, flushes, and returns its exit code: 1 with problems, else
/// kNamedFaultyRank when the message names `faultyRank`, kNamedOtherRank otherwise.
int reportRank(int rank, const RankOutcome& outcome, int faultyRank,
               const std::string& details = "");

/// Parent: whether every survivor ended with a passing code (not overdue) and one at least
/// named `faultyRank`; prints a FAILED line for each that did not.
bool survivorsPassed(const std::vector<ChildExit>& exits, const std::vector<int>& survivors,
                     int faultyRank);

/// Parent: prints a FAILED line per /dev/shm/braid-* segment leaked since `before`;
/// true when none was.
bool noShmLeaked(const std::set<std::string>& before);

}  // namespace braid::testing
