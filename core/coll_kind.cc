#include "core/coll_kind.h"

namespace braid::coll {

const char* collName(CollKind kind) {
  switch (kind) {
    case CollKind::kAllReduce:
      return "allreduce";
    case CollKind::kBroadcast:
      return "broadcast";
    case CollKind::kReduce:
      return "reduce";
    case CollKind::kAllGather:
      return "allgather";
    case CollKind::kReduceScatter:
      return "reducescatter";
    case CollKind::kAllToAll:
      return "alltoall";
    case CollKind::kAllToAllv:
      return "alltoallv";
    case CollKind::kGather:
      return "gather";
    case CollKind::kScatter:
      return "scatter";
    case CollKind::kBarrier:
      return "barrier";
  }
  return "invalid";
}

}  // namespace braid::coll
