// One collective call, run on this rank and checked against the reference.
//
// A CollectiveCase names a collective and its arguments (type, op, count, root,
// in-place). runCase() builds this rank's inputs from an InputPattern, calls the
// braid function, and checks everything this rank can see: the output against
// the float64 reference, the guard bytes after the output (overruns), the send
// buffer (must be left intact out of place) and, for AllToAllv, the gaps
// between received blocks. Because inputs are a pure function of (seed, rank,
// index), no rank needs another rank's memory: the same code checks threads in
// one process and forked processes.
//
// Uses only braid.h, so the multi-process test program shares it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "braid.h"

namespace braid::testing {

enum class Collective {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kAllToAllv,
  kGather,
  kScatter,
  kSendRecvRing,      // in one group: send to rank+1, receive from rank-1
  kSendRecvAllPairs,  // in one group: a distinct block to and from every other rank
  kBarrier,
};

const char* collectiveName(Collective collective);
bool isReducing(Collective collective);
bool isRooted(Collective collective);

struct CollectiveCase {
  Collective collective = Collective::kAllReduce;
  braidDataType_t type = braidFloat32;
  braidRedOp_t op = braidSum;  // reducing collectives only
  size_t count = 0;            // per-rank count, as braid.h defines it for each collective
  int root = 0;                // rooted collectives only
  bool inPlace = false;
  std::string describe() const;
};

struct CaseOutcome {
  braidResult_t result = braidSuccess;  // what the braid call returned
  std::string failure;                  // "" when the call succeeded and the output matched
  bool ok() const { return failure.empty(); }
};

/// Runs `c` on this rank of `comm` with inputs from `seed` and checks the result.
CaseOutcome runCase(braidComm_t comm, const CollectiveCase& c, uint64_t seed);

using FailureSink = std::function<void(const CollectiveCase& c, const CaseOutcome& outcome)>;

/// Runs `cases` in order (case i uses seed + i, so no case can pass on a
/// previous case's data) and reports each failure to `onFailure`. Stops after
/// the first case whose call returns an error, since the communicator may then
/// be unusable. Returns the number of failed cases.
int runCases(braidComm_t comm, const std::vector<CollectiveCase>& cases, uint64_t seed,
             const FailureSink& onFailure);

}  // namespace braid::testing
