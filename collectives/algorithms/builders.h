// The schedule builders, one per (algorithm, collective); the registry in
// collectives/algorithm.cc is their only caller. Each builder returns
// args.rank's schedule and may assume the caller validated args (count >= 1
// except for AllToAllv and Barrier, root and rank in range, a valid type).
#pragma once

#include "collectives/schedule.h"

namespace braid::coll {

Schedule buildRingAllReduce(const CollArgs& args);
Schedule buildRingBroadcast(const CollArgs& args);
Schedule buildRingReduce(const CollArgs& args);
Schedule buildRingAllGather(const CollArgs& args);
Schedule buildRingReduceScatter(const CollArgs& args);
Schedule buildRingAllToAll(const CollArgs& args);
Schedule buildRingGather(const CollArgs& args);
Schedule buildRingScatter(const CollArgs& args);
Schedule buildRingBarrier(const CollArgs& args);

Schedule buildTreeAllReduce(const CollArgs& args);
Schedule buildTreeBroadcast(const CollArgs& args);
Schedule buildTreeReduce(const CollArgs& args);

Schedule buildPairwiseAllToAll(const CollArgs& args);
Schedule buildPairwiseAllToAllv(const CollArgs& args);
Schedule buildDirectAllToAll(const CollArgs& args);
Schedule buildDirectAllToAllv(const CollArgs& args);

Schedule buildDirectGather(const CollArgs& args);
Schedule buildDirectScatter(const CollArgs& args);
Schedule buildDirectBroadcast(const CollArgs& args);
Schedule buildDirectAllGather(const CollArgs& args);

Schedule buildDisseminationBarrier(const CollArgs& args);

/// Binomial tree ("binomial"): Broadcast only, the small-message default for > 2 ranks.
Schedule buildBinomialBroadcast(const CollArgs& args);

/// Recursive doubling ("rd"): AllReduce only, and not floating min/max (see its file).
bool supportsRecursiveDoublingAllReduce(const CollArgs& args);
Schedule buildRecursiveDoublingAllReduce(const CollArgs& args);

/// Exchange ("exchange"): AllReduce and Barrier of tiny messages on few ranks (the limits are
/// in thresholds.h); selection prefers it on shared memory up to BRAID_TINY_BYTES.
bool supportsExchange(const CollArgs& args);
Schedule buildExchangeAllReduce(const CollArgs& args);

}  // namespace braid::coll
