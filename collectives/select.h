// The one place where a call's algorithm and protocol are chosen.
//
//   select(call, memory, overrides) -> { algorithm, protocol }
//
// In order: what the user forced (BRAID_ALGO / BRAID_PROTO, per collective and size range,
// parsed once per communicator), where it names something that runs these arguments; else,
// for host buffers on shared-memory links, the one-round exchange for tiny all-reduces and
// barriers (its supports() test, up to BRAID_TINY_BYTES; no rule may cover the call); else
// the rule of thumb (thresholds.h) by size, ranks and hosts; for all-reduce on one host, the
// tuner (topology/tuner.h) overrules the rule where the calibrated cost model predicts a
// clear gain. Across hosts all-reduce prefers the host-aware schedule.
//
// Every rank must reach the same answer, so the inputs are only what all ranks share: the
// call's kind, count, type, op and root, the rank count and host table, the transport's
// kind and BRAID_TINY_BYTES, and the overrides agreed at init (rank 0's). The protocol matters to
// the device executor; host connectors carry whole messages and report Simple.
#pragma once

#include <cstdint>
#include <string>

#include "collectives/algorithm.h"
#include "collectives/schedule.h"
#include "core/selection_spec.h"
#include "core/status.h"
#include "topology/cost_model.h"

namespace braid::coll {

enum class MemoryKind : uint8_t { kHost, kDevice };

/// BRAID_ALGO and BRAID_PROTO, parsed and checked once.
struct Overrides {
  SelectionSpec algorithm;
  SelectionSpec protocol;

  /// Parses both specs (core/selection_spec.h). A malformed spec, an algorithm name no
  /// collective has or a protocol other than simple / ll / ll128 is an invalid-argument
  /// error naming the variable.
  static Result<Overrides> parse(const std::string& algorithm, const std::string& protocol);
};

struct Selection {
  const Algorithm* algorithm = nullptr;
  topo::Protocol protocol = topo::Protocol::kSimple;
};

/// The algorithm and protocol for `args` (valid arguments; rank and nranks set).
Selection select(const CollArgs& args, MemoryKind memory, const Overrides& overrides);

/// What selection picks with nothing forced: braid-topo prints it.
const Algorithm& defaultAlgorithm(const CollArgs& args);

/// args.rank's schedule under the selected algorithm.
Result<Schedule> buildSelected(const CollArgs& args, MemoryKind memory, const Overrides& overrides);

/// buildSelected with `forcedAlgorithm` parsed as BRAID_ALGO on each call: for tests and
/// tools; the library parses the overrides once per communicator.
Result<Schedule> buildSchedule(const CollArgs& args, const std::string& forcedAlgorithm);

}  // namespace braid::coll
