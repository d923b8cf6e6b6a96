#include "support/collective_sweep.h"

namespace braid::testing {
namespace {

struct Pick {
  braidDataType_t type;
  braidRedOp_t op;
  bool inPlace;
};

// Large-count picks: see the header for why only these.
const Pick kLargeReducing[] = {
    {braidFloat32, braidSum, false}, {braidFloat32, braidSum, true},
    {braidFloat16, braidSum, false}, {braidBfloat16, braidSum, true},
    {braidInt32, braidMax, false},   {braidUint8, braidSum, true},
    {braidFloat64, braidAvg, false},
};
const Pick kLargeMoving[] = {
    {braidFloat32, braidSum, false}, {braidFloat32, braidSum, true},
    {braidFloat16, braidSum, false}, {braidUint8, braidSum, true},
    {braidFloat64, braidSum, false},
};

bool supportsInPlace(Collective collective) {
  return collective != Collective::kAllToAllv && collective != Collective::kSendRecvRing &&
         collective != Collective::kSendRecvAllPairs && collective != Collective::kBarrier;
}

// The fp8 types are one byte, as int8/uint8 are, so collectives that only move data learn
// nothing new from them, and counts 0 and 1 exercise no more of their arithmetic than 7
// does: they join the sweep where they reduce, at counts with tails and chunks (CI time).
bool sweepsType(braidDataType_t type, bool reducing, size_t count) {
  const bool fp8 = type == braidFloat8e4m3 || type == braidFloat8e5m2;
  return !fp8 || (reducing && count > 1);
}

}  // namespace

std::vector<Collective> allCollectives() {
  return {Collective::kAllReduce,    Collective::kBroadcast,        Collective::kReduce,
          Collective::kAllGather,    Collective::kReduceScatter,    Collective::kAllToAll,
          Collective::kAllToAllv,    Collective::kGather,           Collective::kScatter,
          Collective::kSendRecvRing, Collective::kSendRecvAllPairs, Collective::kBarrier};
}

std::vector<CollectiveCase> sweepCases(const SweepSpec& spec, int nranks) {
  std::vector<int> roots = {0};
  if (nranks > 1) roots.push_back(nranks - 1);
  std::vector<CollectiveCase> cases;
  for (Collective collective : spec.collectives) {
    if (collective == Collective::kBarrier) {
      for (int i = 0; i < 3; ++i) cases.push_back({collective});
      continue;
    }
    // A ring of one is a send to self, which api tests cover on purpose.
    if (collective == Collective::kSendRecvRing && nranks == 1) continue;
    const bool reducing = isReducing(collective);
    const std::vector<int> caseRoots = isRooted(collective) ? roots : std::vector<int>{0};
    const int ops = reducing ? braidNumOps : 1;
    const int placements = supportsInPlace(collective) ? 2 : 1;
    const std::vector<Pick> picks =
        reducing ? std::vector<Pick>(std::begin(kLargeReducing), std::end(kLargeReducing))
                 : std::vector<Pick>(std::begin(kLargeMoving), std::end(kLargeMoving));
    for (size_t count : spec.counts) {
      if (spec.smallPicksOnly) {
        for (const Pick& pick : picks) {
          if (pick.inPlace && placements == 1) continue;
          for (int root : caseRoots) {
            cases.push_back({collective, pick.type, pick.op, count, root, pick.inPlace});
          }
        }
        continue;
      }
      for (int t = 0; t < braidNumTypes; ++t) {
        if (!sweepsType(static_cast<braidDataType_t>(t), reducing, count)) continue;
        for (int op = 0; op < ops; ++op) {
          for (int root : caseRoots) {
            for (int inPlace = 0; inPlace < placements; ++inPlace) {
              cases.push_back({collective, static_cast<braidDataType_t>(t),
                               static_cast<braidRedOp_t>(op), count, root, inPlace == 1});
            }
          }
        }
      }
    }
    if (spec.largeCount == 0) continue;
    if (spec.largeEveryTypeAndOp) {
      for (int t = 0; t < braidNumTypes; ++t) {
        if (!sweepsType(static_cast<braidDataType_t>(t), reducing, spec.largeCount)) continue;
        for (int op = 0; op < ops; ++op) {
          for (int inPlace = 0; inPlace < placements; ++inPlace) {
            int root = caseRoots[(t + op) % caseRoots.size()];
            cases.push_back({collective, static_cast<braidDataType_t>(t),
                             static_cast<braidRedOp_t>(op), spec.largeCount, root, inPlace == 1});
          }
        }
      }
      continue;
    }
    int index = 0;
    for (const Pick& pick : picks) {
      if (pick.inPlace && placements == 1) continue;
      int root = caseRoots[index++ % caseRoots.size()];
      cases.push_back({collective, pick.type, pick.op, spec.largeCount, root, pick.inPlace});
    }
  }
  return cases;
}

}  // namespace braid::testing
