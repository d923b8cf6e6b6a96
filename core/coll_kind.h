// The collectives braid knows, by kind: the one vocabulary that the cost model (topology/),
// the schedules (collectives/) and the communicator share.
#pragma once

#include <cstdint>

namespace braid::coll {

enum class CollKind : uint8_t {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kAllToAllv,
  kGather,
  kScatter,
  kBarrier,
};
/// "allreduce", "broadcast", ... (braid-perf's and BRAID_ALGO's spelling).
const char* collName(CollKind kind);

}  // namespace braid::coll
