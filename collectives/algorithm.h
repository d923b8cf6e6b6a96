// The algorithm registry: every (algorithm, collective) pair is one entry, with a name, the
// collective it implements, an optional constraint check and the builder that turns CollArgs
// into one rank's Schedule. Which entry runs a call is decided in one place,
// collectives/select.h.
#pragma once

#include <string>
#include <vector>

#include "collectives/schedule.h"
#include "core/status.h"

namespace braid::coll {

struct Algorithm {
  const char* name;  // "ring", "tree", "rd", "pairwise", "direct", "dissemination"
  CollKind kind;
  /// Whether the algorithm can run these arguments (nullptr: always). Must answer
  /// the same on every rank.
  bool (*supports)(const CollArgs& args);
  /// args.rank's schedule; args are valid and supported.
  Schedule (*build)(const CollArgs& args);
};

/// Every registered (algorithm, collective) entry.
const std::vector<Algorithm>& allAlgorithms();

/// Names of the algorithms implementing `kind`, the default for large messages first.
std::vector<std::string> algorithmNames(CollKind kind);

/// Whether any collective has an algorithm called `name`.
bool isAlgorithmName(const std::string& name);

/// The entry called `name` for args.kind that supports `args`, or null.
const Algorithm* findAlgorithm(const std::string& name, const CollArgs& args);

/// Every algorithm name, comma-separated (for error messages).
std::string knownAlgorithmNames();

/// args.rank's schedule under `algorithm` (an entry for args.kind that supports `args`);
/// an internal error for arguments no schedule can have.
Result<Schedule> buildSchedule(const CollArgs& args, const Algorithm& algorithm);

/// What the buffer sizes of a call read, AllToAllv aside (its counts vary per rank).
struct CallShape {
  CollKind kind;
  size_t count;
  braidDataType_t type;
  int root;
  int rank;
  int nranks;
};
struct BufferSizes {
  size_t send = 0;
  size_t recv = 0;
};
/// sendBufferBytes and recvBufferBytes of a call of `shape` (not AllToAllv) in one step:
/// every call checks its buffers, so this is on the latency path.
BufferSizes bufferSizes(const CallShape& shape);

/// Bytes of the send buffer a schedule for `args` may touch on args.rank (0 where
/// the rank has no send buffer, e.g. a broadcast non-root).
size_t sendBufferBytes(const CollArgs& args);

/// Bytes of the receive buffer a schedule for `args` may touch on args.rank (0 where
/// the rank has none, e.g. a reduce non-root).
size_t recvBufferBytes(const CollArgs& args);

}  // namespace braid::coll
