// select (see the header): overrides, then the rule of thumb, then the tuner.
#include "collectives/select.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/hierarchical.h"
#include "collectives/thresholds.h"
#include "core/config.h"
#include "core/types.h"
#include "topology/tuner.h"

namespace braid::coll {
namespace {

// Whether the ranks sit on more than one host (the tuner's constants describe one).
bool spansHosts(const CollArgs& args) {
  return args.hosts != nullptr &&
         std::any_of(args.hosts->begin(), args.hosts->end(), [](int h) { return h != 0; });
}

size_t callBytes(const CollArgs& args) { return args.count * typeSize(args.type); }

// The built-in rule (thresholds.h); the tuner may overrule it (defaultAlgorithm).
const char* ruleOfThumb(const CollArgs& args) {
  const Thresholds& t = kThresholds;
  const size_t bytes = callBytes(args);
  switch (args.kind) {
    case CollKind::kAllReduce:
      if (bytes <= t.recursiveDoublingMaxBytes && supportsRecursiveDoublingAllReduce(args)) {
        return "rd";
      }
      [[fallthrough]];
    case CollKind::kReduce:
      return bytes <= t.treeMaxBytes && args.nranks > 2 ? "tree" : "ring";
    case CollKind::kBroadcast:
      // Small: one hop from the root on a few ranks, the binomial tree above; large: the
      // pipelined chain.
      if (bytes <= t.treeMaxBytes && args.nranks > 2) {
        return args.nranks <= t.directBroadcastMaxRanks ? "direct" : "binomial";
      }
      // Up to one chunk the chain has nothing to pipeline: its n-1 hops run one after
      // another, the binomial tree's ceil(log2 n) do (on 3 ranks both take two).
      if (bytes <= args.chunkBytes && args.nranks > 3) return "binomial";
      return "ring";
    case CollKind::kAllToAll:
      if (args.nranks >= t.directAllToAllMinRanks && !spansHosts(args)) return "direct";
      [[fallthrough]];
    case CollKind::kAllToAllv:
      // Each block crosses one link; the ring relay moves ~n/2 times more data.
      return "pairwise";
    case CollKind::kGather:
    case CollKind::kScatter:
      // The root's links bound both; direct adds one hop of latency, the chain n-1.
      return "direct";
    case CollKind::kBarrier:
      return "dissemination";
    case CollKind::kAllGather:
    case CollKind::kReduceScatter:
      return "ring";
  }
  return nullptr;
}

// Tiny all-reduces and barriers on shared memory: the exchange's one round (thresholds.h)
// where the transport offers it (sharedMemory) up to BRAID_TINY_BYTES per rank. There a call
// costs host bookkeeping and dependent steps, not bytes; over TCP each message is a system
// call and the schedules' fewer messages win.
bool prefersExchange(const CollArgs& args) {
  if (!args.sharedMemory || args.tinyBytes == 0) return false;
  return args.kind == CollKind::kBarrier ||
         (args.kind == CollKind::kAllReduce && callBytes(args) <= args.tinyBytes);
}

// The tuner's CPU constants come from shared memory.
constexpr const char* kTunedLink = "shm";

// Broadcast and reduce are not tuned yet: the calibration samples have the chain (ring)
// faster than the tree below 8 KiB for 3..8 ranks (docs/TOPOLOGY.md), against the rule
// above that schedule_registry_test asserts; handing them over needs that test updated.
//
// All-to-all is not handed over either: its calibrated pairwise constant (the table in
// topology/calibrated_constants.cc) predates later pairwise fixes (no per-poll scan of
// the step, the own block copied between receives), so the model had the relaying ring
// faster for 2 ranks and overruled pairwise from 256 KiB up, where pairwise is the faster
// (perf/RESULTS.md, "Algorithm choices"). For 2 ranks the ring moves the same bytes over
// the link plus staging copies through scratch.
bool tunerMayOverrule(CollKind kind) { return kind == CollKind::kAllReduce; }

// The protocol for device buffers: BRAID_PROTO where it names one the device executor has,
// else LL up to llMaxBytes. The device executor has no LL128: a rule naming it selects
// automatically, as a forced algorithm that cannot run the call does.
topo::Protocol deviceProtocol(const CollArgs& args, const SelectionSpec& forced) {
  const size_t bytes = callBytes(args);
  const std::string name = forced.pick(collName(args.kind), bytes);
  if (name == "simple") return topo::Protocol::kSimple;
  if (name == "ll") return topo::Protocol::kLL;
  return bytes <= kThresholds.llMaxBytes ? topo::Protocol::kLL : topo::Protocol::kSimple;
}

}  // namespace

Result<Overrides> Overrides::parse(const std::string& algorithm, const std::string& protocol) {
  Overrides o;
  BRAID_ASSIGN_OR_RETURN(o.algorithm,
                         SelectionSpec::parse(algorithm, "BRAID_ALGO", Config::collectiveNames()));
  for (const SelectionChoice& choice : o.algorithm.choices()) {
    if (!isAlgorithmName(choice.name)) {
      return invalidArgument("BRAID_ALGO=" + algorithm + ": '" + choice.name +
                             "' names no algorithm; known: " + knownAlgorithmNames());
    }
  }
  BRAID_ASSIGN_OR_RETURN(o.protocol,
                         SelectionSpec::parse(protocol, "BRAID_PROTO", Config::collectiveNames()));
  for (const SelectionChoice& choice : o.protocol.choices()) {
    if (!topo::protocolFromName(choice.name)) {
      return invalidArgument("BRAID_PROTO=" + protocol + ": '" + choice.name +
                             "' names no protocol; known: simple, ll, ll128");
    }
  }
  return o;
}

const Algorithm& defaultAlgorithm(const CollArgs& args) {
  // Across hosts, the host-aware schedule; the tuner's constants describe one host.
  if (args.kind == CollKind::kAllReduce && prefersHierarchicalAllReduce(args)) {
    if (const Algorithm* hier = findAlgorithm("hier", args)) return *hier;
  }
  const char* name = ruleOfThumb(args);
  const Algorithm* algorithm = name ? findAlgorithm(name, args) : nullptr;
  // Every collective registers its default without constraints, so this is not reached
  // with a valid kind; fall back to the first entry rather than dereference null.
  if (algorithm == nullptr) return allAlgorithms().front();
  if (!tunerMayOverrule(args.kind) || spansHosts(args)) return *algorithm;
  std::vector<std::string> candidates;
  for (const Algorithm& a : allAlgorithms()) {
    if (a.kind == args.kind && (a.supports == nullptr || a.supports(args))) {
      candidates.push_back(a.name);
    }
  }
  const topo::CostModel& model = topo::CostModel::calibrated();
  const double bytes = static_cast<double>(callBytes(args));
  std::optional<topo::Choice> best =
      topo::fastest(model, kTunedLink, args.kind, bytes, args.nranks, candidates);
  std::optional<double> ruleUs =
      model.predictUs(args.kind, name, topo::Protocol::kSimple, kTunedLink, args.nranks,
                      topo::reportedSize(args.kind, bytes, args.nranks));
  if (best && ruleUs && best->predictedUs * kThresholds.tunerTrustedGain < *ruleUs) {
    if (const Algorithm* tuned = findAlgorithm(best->algorithm, args)) return *tuned;
  }
  return *algorithm;
}

Selection select(const CollArgs& args, MemoryKind memory, const Overrides& overrides) {
  Selection s;
  bool forced = false;  // a rule covers the call, even one naming an algorithm that cannot run it
  if (!overrides.algorithm.empty()) {
    const std::string name = overrides.algorithm.pick(collName(args.kind), callBytes(args));
    forced = !name.empty();
    if (forced) s.algorithm = findAlgorithm(name, args);
  }
  if (s.algorithm == nullptr && !forced && memory == MemoryKind::kHost && prefersExchange(args)) {
    s.algorithm = findAlgorithm("exchange", args);
  }
  if (s.algorithm == nullptr) s.algorithm = &defaultAlgorithm(args);
  if (memory == MemoryKind::kDevice) s.protocol = deviceProtocol(args, overrides.protocol);
  return s;
}

Result<Schedule> buildSelected(const CollArgs& args, MemoryKind memory,
                               const Overrides& overrides) {
  return buildSchedule(args, *select(args, memory, overrides).algorithm);
}

Result<Schedule> buildSchedule(const CollArgs& args, const std::string& forcedAlgorithm) {
  BRAID_ASSIGN_OR_RETURN(Overrides overrides, Overrides::parse(forcedAlgorithm, ""));
  return buildSelected(args, MemoryKind::kHost, overrides);
}

}  // namespace braid::coll
