// planGroupCall (see the header).
#include "collectives/device/group_plans.h"

#include "collectives/algorithm.h"
#include "collectives/select.h"
#include "core/types.h"

namespace braid::device {

Result<GroupPlans> planGroupCall(const coll::CollArgs& args, int channels,
                                 const coll::Overrides& overrides) {
  // Selection reads only what every rank shares, so rank 0's answer is every rank's.
  const coll::Selection chosen = coll::select(args, coll::MemoryKind::kDevice, overrides);
  GroupPlans group;
  bool splittable = true;
  for (int r = 0; r < args.nranks; ++r) {
    coll::CollArgs a = args;
    a.rank = r;
    // One chunk per ring round: FIFO slots pipeline the transfer, and whole rounds let the
    // plan fuse each receive with the forward of the same bytes.
    a.chunkBytes = size_t(1) << 62;
    BRAID_ASSIGN_OR_RETURN(coll::Schedule schedule, coll::buildSchedule(a, *chosen.algorithm));
    PlanBufferSizes sizes{coll::sendBufferBytes(a), coll::recvBufferBytes(a), schedule.scratchBytes,
                          args.inPlace};
    BRAID_ASSIGN_OR_RETURN(DevicePlan plan,
                           buildDevicePlan(schedule, sizes, typeSize(args.type), true));
    splittable &= plan.splittable;
    group.scratchBytes.push_back(schedule.scratchBytes);
    group.ranks.push_back(std::move(plan));
  }
  group.channels = splittable ? channels : 1;
  group.protocol = chosen.protocol == topo::Protocol::kLL ? Protocol::kLl : Protocol::kSimple;
  return group;
}

std::string groupCallKey(const coll::CollArgs& a) {
  return std::to_string(int(a.kind)) + "/" + std::to_string(a.count) + "/" +
         std::to_string(int(a.type)) + "/" + std::to_string(int(a.op)) + "/" +
         std::to_string(a.root) + "/" + std::to_string(a.inPlace);
}

}  // namespace braid::device
