#include "comm/group.h"

#include <vector>

#include "comm/comm.h"
#include "comm/device_proxy/proxy_registry.h"
#include "comm/direct_collective.h"
#include "comm/engine.h"

namespace braid {
namespace {

struct GroupState {
  int depth = 0;
  std::vector<Op> ops;
  Status error;  // the first error raised inside the group; fails groupEnd
};

thread_local GroupState group;

}  // namespace

Status submit(Op op) {
  if (group.depth > 0) {
    group.ops.push_back(std::move(op));
    return Status::ok();
  }
  waitForDeviceProxy(op.comm);  // device calls queued before run first, alone on the transport
  if (op.kind == OpKind::kCollective) return runCollectiveDirect(op);
  return runOps({&op, 1});
}

Status groupStart() {
  ++group.depth;
  return Status::ok();
}

Status groupEnd() {
  if (group.depth == 0) {
    return invalidUsage("braidGroupEnd called without a matching braidGroupStart");
  }
  if (--group.depth > 0) return Status::ok();
  std::vector<Op> ops = std::move(group.ops);
  group.ops.clear();
  for (const Op& op : ops) waitForDeviceProxy(op.comm);  // as submit() does
  return runOps(ops);
}

}  // namespace braid
