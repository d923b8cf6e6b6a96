// The algorithm registry and the selector that picks one per collective call.
//
// Every (algorithm, collective) pair is one registry entry: a name, the
// collective it implements, an optional constraint check and the builder
// that turns CollArgs into one rank's Schedule. Selection must give the same
// answer on every rank, so it looks only at arguments all ranks share (kind,
// count, type, nranks), never at rank-local ones.
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

/// The algorithm automatic selection picks for `args`: a built-in rule by size and ranks,
/// which the tuner (topology/tuner.h, calibrated cost model) overrules where it predicts a
/// clear gain. Depends only on arguments every rank shares.
const Algorithm& defaultAlgorithm(const CollArgs& args);

/// args.rank's schedule. `forcedAlgorithm` is the BRAID_ALGO spec (core/selection_spec.h):
/// "" selects automatically, as does a size or collective no rule covers; a known name that
/// does not implement this collective (or these arguments) falls back to the default; a
/// name no algorithm has, or a malformed spec, is an invalid-argument error.
Result<Schedule> buildSchedule(const CollArgs& args, const std::string& forcedAlgorithm);

/// Bytes of the send buffer a schedule for `args` may touch on args.rank (0 where
/// the rank has no send buffer, e.g. a broadcast non-root).
size_t sendBufferBytes(const CollArgs& args);

/// Bytes of the receive buffer a schedule for `args` may touch on args.rank (0 where
/// the rank has none, e.g. a reduce non-root).
size_t recvBufferBytes(const CollArgs& args);

}  // namespace braid::coll
