#include "comm/group.h"

#include <algorithm>
#include <map>
#include <span>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "collectives/estimate.h"
#include "collectives/select.h"
#include "comm/comm.h"
#include "comm/device_path.h"
#include "comm/device_proxy/proxy_hooks.h"
#include "comm/direct_collective.h"
#include "comm/engine.h"
#include "comm/handle_table.h"
#include "core/types.h"

namespace braid {
namespace {

struct GroupState {
  std::vector<Op> ops;
  std::vector<Op> deviceOps;  // enqueued on their streams at the outermost groupEnd
  std::vector<void*> deviceStreams;
  Status error;                    // the first error raised inside the group; fails groupEnd
  std::vector<braidComm_t> joins;  // communicators created inside the group
  std::vector<std::function<Status()>> tasks;           // deferTask
  std::map<braidComm_t, std::shared_ptr<Turns>> turns;  // parentTurns
};

thread_local GroupState group;
// The nesting depth, apart from the queues: constant-initialised, so the
// ungrouped call, which reads only this, skips the queues' thread-local set-up.
thread_local int groupDepth = 0;

// A group that mixes host and device buffers on one communicator cannot keep both
// promises: the host calls complete at braidGroupEnd, the device calls on the stream later,
// yet a send and its receive must run together. Every rank makes the same calls, so every
// rank refuses alike.
Status checkNotMixed(const std::vector<Op>& hostOps, const std::vector<Op>& deviceOps) {
  for (const Op& host : hostOps) {
    for (const Op& device : deviceOps) {
      if (host.comm != device.comm) continue;
      return invalidUsage("braidGroupEnd: the group passes host buffers (" +
                          std::string(host.apiName) + ") and device buffers (" + device.apiName +
                          ") on the same communicator (rank " + std::to_string(host.comm->rank()) +
                          "); put host and device calls in separate groups");
    }
  }
  return Status::ok();
}

}  // namespace

Status submitOnDevice(Op op, void* stream) {
  if (groupDepth == 0) return enqueueOnDevice(op, stream);
  BRAID_RETURN_IF_ERROR(checkDeviceBuffers(op));  // refused at the call, as outside a group
  group.deviceOps.push_back(std::move(op));
  group.deviceStreams.push_back(stream);
  return Status::ok();
}

Status submit(Op op) {
  if (groupDepth > 0) {
    group.ops.push_back(std::move(op));
    return Status::ok();
  }
  // Device calls queued before run first, alone on the transport (a communicator that never
  // met device buffers has no proxy: not even a call to find that out).
  if (op.comm->deviceSide() != nullptr) waitForDeviceProxy(op.comm);
  if (op.kind == OpKind::kCollective) return runCollectiveDirect(op);
  return runOps({&op, 1});
}

Status groupStart() {
  ++groupDepth;
  return Status::ok();
}

bool inGroup() { return groupDepth > 0; }

Status deferJoin(braidComm_t handle) {
  group.joins.push_back(handle);
  return Status::ok();
}

std::shared_ptr<Turns> parentTurns(braidComm_t parent) {
  std::shared_ptr<Turns>& turns = group.turns[parent];
  if (turns == nullptr) turns = std::make_shared<Turns>();
  return turns;
}

Status deferTask(std::function<Status()> task) {
  group.tasks.push_back(std::move(task));
  return Status::ok();
}

// The group's communicator inits and derivations, all at once (their ranks wait for each
// other, and may all be this thread's), then waited for; the first failure is the group's.
// After a failed call in the group none runs: each pending handle fails with `failed`.
Status runJoins(const std::vector<braidComm_t>& joins, std::vector<std::function<Status()>> tasks,
                const Status& failed) {
  if (!failed.isOk()) {
    const Status why = failed.withContext(
        "braidGroupEnd: this communicator was not created, because a call inside its group "
        "failed");
    for (braidComm_t handle : joins) abandonJoin(handle, why);
    return Status::ok();
  }
  Status first;
  for (braidComm_t handle : joins) {
    const Status s = startJoin(handle);
    if (first.isOk()) first = s;
  }
  std::vector<Status> results(tasks.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < tasks.size(); ++i) {
    try {
      threads.emplace_back([&tasks, &results, i] { results[i] = tasks[i](); });
    } catch (const std::system_error& e) {
      results[i] = Status(braidSystemError, std::string("cannot start a thread: ") + e.what());
    }
  }
  for (std::thread& t : threads) t.join();
  for (const Status& s : results) {
    if (first.isOk()) first = s.withContext("braidGroupEnd: a derived communicator in the group");
  }
  for (braidComm_t handle : joins) {
    const Status s = waitJoin(handle);
    if (first.isOk()) first = s.withContext("braidGroupEnd: a communicator init in the group");
  }
  return first;
}

void failGroup(const Status& error) {
  if (groupDepth > 0 && group.error.isOk()) group.error = error;
}

Status groupEnd() {
  if (groupDepth == 0) {
    return invalidUsage("braidGroupEnd called without a matching braidGroupStart");
  }
  if (--groupDepth > 0) return Status::ok();
  std::vector<Op> ops = std::move(group.ops);
  std::vector<Op> deviceOps = std::move(group.deviceOps);
  std::vector<void*> deviceStreams = std::move(group.deviceStreams);
  group.ops.clear();
  group.deviceOps.clear();
  group.deviceStreams.clear();
  const Status failed = std::move(group.error);
  group.error = Status::ok();
  const std::vector<braidComm_t> joins = std::move(group.joins);
  group.joins.clear();
  std::vector<std::function<Status()>> tasks = std::move(group.tasks);
  group.tasks.clear();
  group.turns.clear();  // the queued derivations hold theirs
  BRAID_RETURN_IF_ERROR(runJoins(joins, std::move(tasks), failed));
  if (!failed.isOk()) {
    return Status(failed.code(),
                  "braidGroupEnd: a call inside the group failed, so none of its " +
                      std::to_string(ops.size() + deviceOps.size()) +
                      " queued calls ran (the group is dropped): " + failed.message(),
                  failed.peer());
  }
  BRAID_RETURN_IF_ERROR(checkNotMixed(ops, deviceOps));
  Status device;
  if (!deviceOps.empty()) device = enqueueDeviceGroup(deviceOps, deviceStreams);
  if (ops.empty()) return device;
  for (const Op& op : ops) waitForDeviceProxy(op.comm);  // as submit() does
  const Status host = runOps(ops);
  return device.isOk() ? host : device;
}

namespace {

// Whether `comm`'s ranks sit on more than one host (the socket constants apply).
bool spansHosts(const Comm& comm) {
  const auto hosts = comm.hosts();
  return hosts != nullptr && std::any_of(hosts->begin(), hosts->end(), [](int h) { return h; });
}

double estimateOp(const Op& op, coll::MemoryKind memory) {
  if (op.kind != OpKind::kCollective) {
    return coll::estimatePointToPointUs(op.count * typeSize(op.type), spansHosts(*op.comm));
  }
  const coll::CollArgs args = toCollArgs(op);
  const coll::Selection picked = coll::select(args, memory, op.comm->overrides());
  return coll::estimateCollectiveUs(args, picked.algorithm ? picked.algorithm->name : "");
}

}  // namespace

Status groupSimulateEnd(double* estimatedUs) {
  if (groupDepth == 0) {
    return invalidUsage("braidGroupSimulateEnd called without a matching braidGroupStart");
  }
  double total = 0;
  for (const Op& op : group.ops) total += estimateOp(op, coll::MemoryKind::kHost);
  for (const Op& op : group.deviceOps) total += estimateOp(op, coll::MemoryKind::kDevice);
  *estimatedUs = total;
  if (groupDepth > 1) {  // an inner level: its calls stay queued for the outermost end
    --groupDepth;
    return Status::ok();
  }
  // The outermost level: drop the calls and let groupEnd run the inits (and, when a call
  // was rejected inside the group, fail with it as it always does, running nothing).
  if (group.error.isOk()) {
    group.ops.clear();
    group.deviceOps.clear();
    group.deviceStreams.clear();
  }
  return groupEnd();
}

}  // namespace braid
