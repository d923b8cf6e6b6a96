#include "collectives/algorithm.h"

#include <algorithm>

#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/hierarchical.h"
#include "core/config.h"
#include "core/selection_spec.h"
#include "core/types.h"
#include "topology/tuner.h"

namespace braid::coll {

namespace {

// Below this many bytes per rank (and with more than two ranks) reduce, and
// all-reduces too large for recursive doubling (below), use the double binary
// tree; broadcast goes direct or binomial (kDirectBroadcastMaxRanks). Small messages are
// bound by per-hop latency: the tree needs O(log n) hops in sequence where the
// ring needs O(n) (2(n-1) for all-reduce). Large ones are bound by bandwidth,
// where the ring is optimal (each rank sends 2(n-1)/n of the buffer for all-reduce)
// and pipelines without the tree's fill and drain. 64 KiB is where, on shared
// memory and TCP alike, a few microseconds per hop times the extra hops stop
// mattering next to the transfer itself. With two ranks both are one hop.
constexpr size_t kTreeMaxBytes = 64 << 10;

// Up to this many bytes per rank, all-reduce uses recursive doubling: log2(n)
// whole-buffer exchanges (plus a fold and an unfold when n is not a power of
// two), the fewest hops in sequence, against the tree's 2 log2(n) and the
// ring's 2(n-1). It moves log2(n) times the buffer per rank, so it loses once
// bandwidth counts. With braid-perf on shm and TCP (n = 2..4), rd was fastest through 8 KiB
// everywhere, on par with or ahead of the tree at 16 KiB, behind it at 64 KiB for four ranks; 16
// KiB keeps rd where it wins or ties. Floating min/max are not bitwise commutative, so those keep
// the tree.
constexpr size_t kRecursiveDoublingMaxBytes = 16 << 10;

// Up to this many ranks (and kTreeMaxBytes), broadcast is direct: the root sends
// to every rank itself, so each rank waits for one hop, the root's, and never for
// a forwarding rank to be scheduled. With more ranks than cores that wait is a
// context switch, longer than a small message's transfer (perf/RESULTS.md,
// "Algorithm choices"). The root's n-1 sends (against the tree's two) keep it
// to few ranks.
constexpr int kDirectBroadcastMaxRanks = 4;
// Above it, small broadcasts take the binomial tree: as few hops as the double tree with half
// the messages per rank, and small messages are bound by per-message costs.

// With at least kDirectAllToAllMinRanks ranks on one host, all-to-all posts every exchange
// in one step ("direct") instead of one peer per step: a rank then moves data with
// whichever peers are running instead of waiting for one that was descheduled. With 3 ranks
// pairwise still ran ahead. With large blocks read in place
// (transports/shm/single_copy.h) a posted block costs its sender nothing until the peer reads
// it, so direct wins at every size (perf/RESULTS.md, "Algorithm choices").
constexpr int kDirectAllToAllMinRanks = 4;

const std::vector<Algorithm>& registry() {
  // Per collective, the large-message default comes first (algorithmNames keeps this order).
  static const std::vector<Algorithm> kAlgorithms = {
      {"ring", CollKind::kAllReduce, nullptr, buildRingAllReduce},
      {"tree", CollKind::kAllReduce, nullptr, buildTreeAllReduce},
      {"rd", CollKind::kAllReduce, supportsRecursiveDoublingAllReduce,
       buildRecursiveDoublingAllReduce},
      {"hier", CollKind::kAllReduce, supportsHierarchical, buildHierarchicalAllReduce},
      {"hiertree", CollKind::kAllReduce, supportsHierarchical, buildHierarchicalTreeAllReduce},
      {"ring", CollKind::kBroadcast, nullptr, buildRingBroadcast},
      {"tree", CollKind::kBroadcast, nullptr, buildTreeBroadcast},
      {"binomial", CollKind::kBroadcast, nullptr, buildBinomialBroadcast},
      {"hier", CollKind::kBroadcast, supportsHierarchical, buildHierarchicalBroadcast},
      {"direct", CollKind::kBroadcast, nullptr, buildDirectBroadcast},
      {"ring", CollKind::kReduce, nullptr, buildRingReduce},
      {"tree", CollKind::kReduce, nullptr, buildTreeReduce},
      {"hier", CollKind::kReduce, supportsHierarchical, buildHierarchicalReduce},
      {"ring", CollKind::kAllGather, nullptr, buildRingAllGather},
      {"direct", CollKind::kAllGather, nullptr, buildDirectAllGather},
      {"ring", CollKind::kReduceScatter, nullptr, buildRingReduceScatter},
      {"pairwise", CollKind::kAllToAll, nullptr, buildPairwiseAllToAll},
      {"ring", CollKind::kAllToAll, nullptr, buildRingAllToAll},
      {"direct", CollKind::kAllToAll, nullptr, buildDirectAllToAll},
      {"pairwise", CollKind::kAllToAllv, nullptr, buildPairwiseAllToAllv},
      {"direct", CollKind::kAllToAllv, nullptr, buildDirectAllToAllv},
      {"direct", CollKind::kGather, nullptr, buildDirectGather},
      {"ring", CollKind::kGather, nullptr, buildRingGather},
      {"direct", CollKind::kScatter, nullptr, buildDirectScatter},
      {"ring", CollKind::kScatter, nullptr, buildRingScatter},
      {"dissemination", CollKind::kBarrier, nullptr, buildDisseminationBarrier},
      {"ring", CollKind::kBarrier, nullptr, buildRingBarrier},
  };
  return kAlgorithms;
}

// Whether the ranks sit on more than one host (the tuner's constants describe one).
bool spansHosts(const CollArgs& args) {
  return args.hosts != nullptr &&
         std::any_of(args.hosts->begin(), args.hosts->end(), [](int h) { return h != 0; });
}

// The built-in rule (the constants above); the tuner may overrule it (defaultAlgorithm).
const char* ruleOfThumb(const CollArgs& args) {
  const size_t bytes = args.count * typeSize(args.type);
  switch (args.kind) {
    case CollKind::kAllReduce:
      if (bytes <= kRecursiveDoublingMaxBytes && supportsRecursiveDoublingAllReduce(args)) {
        return "rd";
      }
      [[fallthrough]];
    case CollKind::kReduce:
      return bytes <= kTreeMaxBytes && args.nranks > 2 ? "tree" : "ring";
    case CollKind::kBroadcast:
      // Small: one hop from the root on a few ranks, the binomial tree above; large: the
      // pipelined chain.
      if (bytes <= kTreeMaxBytes && args.nranks > 2) {
        return args.nranks <= kDirectBroadcastMaxRanks ? "direct" : "binomial";
      }
      return "ring";
    case CollKind::kAllToAll:
      if (args.nranks >= kDirectAllToAllMinRanks && !spansHosts(args)) return "direct";
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

// The calibrated cost model (topology/calibrated_constants.cc) overrules the rule above
// only where it predicts the alternative at least this much faster: fitted on a shared,
// loaded machine, its error against measurement is large, worse on samples it was not
// fitted to (docs/TOPOLOGY.md), so a smaller predicted gain is within its error. Its CPU
// constants come from shared memory.
constexpr double kTrustedGain = 2.0;
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

const Algorithm* find(const std::string& name, const CollArgs& args) {
  for (const Algorithm& algorithm : registry()) {
    if (algorithm.kind == args.kind && name == algorithm.name &&
        (algorithm.supports == nullptr || algorithm.supports(args))) {
      return &algorithm;
    }
  }
  return nullptr;
}

std::string knownNames() {
  std::vector<std::string> names;
  for (const Algorithm& algorithm : registry()) {
    if (std::find(names.begin(), names.end(), algorithm.name) == names.end()) {
      names.push_back(algorithm.name);
    }
  }
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

// The bytes an all-to-all-v buffer spans: the end of its farthest non-empty block.
size_t extentBytes(const std::vector<size_t>& counts, const std::vector<size_t>& displs,
                   size_t elemBytes) {
  size_t end = 0;
  for (size_t j = 0; j < counts.size() && j < displs.size(); ++j) {
    if (counts[j] > 0) end = std::max(end, displs[j] + counts[j]);
  }
  return end * elemBytes;
}

}  // namespace

const std::vector<Algorithm>& allAlgorithms() { return registry(); }

std::vector<std::string> algorithmNames(CollKind kind) {
  std::vector<std::string> names;
  for (const Algorithm& algorithm : registry()) {
    if (algorithm.kind == kind) names.push_back(algorithm.name);
  }
  return names;
}

bool isAlgorithmName(const std::string& name) {
  for (const Algorithm& algorithm : registry()) {
    if (name == algorithm.name) return true;
  }
  return false;
}

const Algorithm& defaultAlgorithm(const CollArgs& args) {
  // Across hosts, the host-aware schedule; the tuner's constants describe one host.
  if (args.kind == CollKind::kAllReduce && prefersHierarchicalAllReduce(args)) {
    if (const Algorithm* hier = find("hier", args)) return *hier;
  }
  const char* name = ruleOfThumb(args);
  const Algorithm* algorithm = name ? find(name, args) : nullptr;
  // Every collective registers its default without constraints, so this is not reached
  // with a valid kind; fall back to the first entry rather than dereference null.
  if (algorithm == nullptr) return registry().front();
  if (!tunerMayOverrule(args.kind) || spansHosts(args)) return *algorithm;
  std::vector<std::string> candidates;
  for (const Algorithm& a : registry()) {
    if (a.kind == args.kind && (a.supports == nullptr || a.supports(args))) {
      candidates.push_back(a.name);
    }
  }
  const topo::CostModel& model = topo::CostModel::calibrated();
  const double bytes = static_cast<double>(args.count * typeSize(args.type));
  std::optional<topo::Choice> best =
      topo::fastest(model, kTunedLink, args.kind, bytes, args.nranks, candidates);
  std::optional<double> ruleUs =
      model.predictUs(args.kind, name, topo::Protocol::kSimple, kTunedLink, args.nranks,
                      topo::reportedSize(args.kind, bytes, args.nranks));
  if (best && ruleUs && best->predictedUs * kTrustedGain < *ruleUs) {
    if (const Algorithm* tuned = find(best->algorithm, args)) return *tuned;
  }
  return *algorithm;
}

Result<Schedule> buildSchedule(const CollArgs& args, const std::string& forcedAlgorithm) {
  if (args.nranks < 1 || args.rank < 0 || args.rank >= args.nranks) {
    return internalError("buildSchedule: rank " + std::to_string(args.rank) +
                         " is outside a communicator of " + std::to_string(args.nranks));
  }
  if (typeSize(args.type) == 0) {
    return internalError("buildSchedule: invalid datatype " +
                         std::to_string(static_cast<int>(args.type)));
  }
  if (args.kind == CollKind::kAllToAllv) {
    size_t n = static_cast<size_t>(args.nranks);
    if (args.sendCounts.size() != n || args.sendDispls.size() != n || args.recvCounts.size() != n ||
        args.recvDispls.size() != n) {
      return internalError("buildSchedule: alltoallv needs one count and displacement per rank");
    }
  }
  const Algorithm* chosen = nullptr;
  if (!forcedAlgorithm.empty()) {
    BRAID_ASSIGN_OR_RETURN(SelectionSpec spec, SelectionSpec::parse(forcedAlgorithm, "BRAID_ALGO",
                                                                    Config::collectiveNames()));
    for (const SelectionChoice& choice : spec.choices()) {
      if (!isAlgorithmName(choice.name)) {
        return invalidArgument("BRAID_ALGO=" + forcedAlgorithm + ": '" + choice.name +
                               "' names no algorithm; known: " + knownNames());
      }
    }
    std::string name = spec.pick(collName(args.kind), args.count * typeSize(args.type));
    if (!name.empty()) chosen = find(name, args);
  }
  if (chosen == nullptr) chosen = &defaultAlgorithm(args);
  return chosen->build(args);
}

size_t sendBufferBytes(const CollArgs& args) {
  const size_t block = args.count * typeSize(args.type);
  const size_t n = static_cast<size_t>(args.nranks);
  const bool root = args.rank == args.root;
  switch (args.kind) {
    case CollKind::kAllReduce:
    case CollKind::kReduce:
    case CollKind::kAllGather:
    case CollKind::kGather:
      return block;
    case CollKind::kBroadcast:
      return root ? block : 0;
    case CollKind::kReduceScatter:
    case CollKind::kAllToAll:
      return n * block;
    case CollKind::kScatter:
      return root ? n * block : 0;
    case CollKind::kAllToAllv:
      return extentBytes(args.sendCounts, args.sendDispls, typeSize(args.type));
    case CollKind::kBarrier:
      return 0;
  }
  return 0;
}

size_t recvBufferBytes(const CollArgs& args) {
  const size_t block = args.count * typeSize(args.type);
  const size_t n = static_cast<size_t>(args.nranks);
  const bool root = args.rank == args.root;
  switch (args.kind) {
    case CollKind::kAllReduce:
    case CollKind::kBroadcast:
    case CollKind::kReduceScatter:
    case CollKind::kScatter:
      return block;
    case CollKind::kReduce:
      return root ? block : 0;
    case CollKind::kAllGather:
    case CollKind::kAllToAll:
      return n * block;
    case CollKind::kGather:
      return root ? n * block : 0;
    case CollKind::kAllToAllv:
      return extentBytes(args.recvCounts, args.recvDispls, typeSize(args.type));
    case CollKind::kBarrier:
      return 0;
  }
  return 0;
}

}  // namespace braid::coll
