// The C table libbraid finds with dlsym in libbraid_cuda.so (src/comm/device_path.cc; the
// table's contract is in device_path_abi.h): plain functions over opaque handles.
#include <cuda_runtime.h>

#include <cstdio>
#include <memory>

#include "collectives/device/cuda/device_path_abi.h"
#include "collectives/device/cuda/ipc_group.h"
#include "collectives/device/cuda/single_device_group.h"

using braid::coll::Overrides;
using braid::device::DeviceGroupOptions;
using braid::device::IpcDeviceGroup;
using braid::device::PeerGroupOptions;
using braid::device::SingleDeviceGroup;

namespace {

struct GroupHandle {
  std::shared_ptr<SingleDeviceGroup> single;
  std::shared_ptr<IpcDeviceGroup> peer;
};

int report(const braid::Status& s, char* error, size_t errorBytes) {
  if (s.isOk()) return 0;
  std::snprintf(error, errorBytes, "%s", s.message().c_str());
  return s.code() == braidInvalidUsage ? 2 : s.code() == braidInvalidArgument ? 3 : 1;
}

// The communicator's BRAID_ALGO / BRAID_PROTO, which libbraid parsed at init already.
braid::Result<Overrides> overridesFrom(const char* algorithm, const char* protocol) {
  return Overrides::parse(algorithm != nullptr ? algorithm : "",
                          protocol != nullptr ? protocol : "");
}

void* createGroup(int nranks, int device, const char* algorithm, const char* protocol, char* error,
                  size_t errorBytes) {
  braid::Result<Overrides> overrides = overridesFrom(algorithm, protocol);
  if (!overrides.isOk()) {
    report(overrides.status(), error, errorBytes);
    return nullptr;
  }
  DeviceGroupOptions options;
  options.overrides = std::move(*overrides);
  auto group = SingleDeviceGroup::create(nranks, device, options);
  if (!group.isOk()) {
    report(group.status(), error, errorBytes);
    return nullptr;
  }
  return new GroupHandle{std::move(*group), nullptr};
}

void* createPeerGroup(int rank, int nranks, int device, const char* algorithm, const char* protocol,
                      BraidAllGatherFn allGather, void* context, char* error, size_t errorBytes) {
  braid::Result<Overrides> overrides = overridesFrom(algorithm, protocol);
  if (!overrides.isOk()) {
    report(overrides.status(), error, errorBytes);
    return nullptr;
  }
  // A bad `device` is not refused here: the group's creation reports it through the
  // exchange, so the peers fail with this rank instead of waiting for it.
  auto exchange = [&](void* data, size_t bytes) -> braid::Status {
    char why[512] = "";
    if (allGather(context, data, bytes, why, sizeof(why)) == 0) return braid::Status::ok();
    return braid::internalError(std::string("exchanging device FIFO handles: ") + why);
  };
  PeerGroupOptions options;
  options.overrides = std::move(*overrides);
  auto group = IpcDeviceGroup::create(rank, nranks, device, options, exchange);
  if (!group.isOk()) {
    report(group.status(), error, errorBytes);
    return nullptr;
  }
  return new GroupHandle{nullptr, std::move(*group)};
}

void releaseGroup(void* group) { delete static_cast<GroupHandle*>(group); }

int enqueue(void* group, const BraidDeviceCall* call, const void* send, void* recv, void* stream,
            char* error, size_t errorBytes) {
  auto& g = *static_cast<GroupHandle*>(group);
  braid::coll::CollArgs args;
  args.kind = static_cast<braid::coll::CollKind>(call->kind);
  args.count = call->count;
  args.type = static_cast<braidDataType_t>(call->type);
  args.op = static_cast<braidRedOp_t>(call->op);
  args.root = call->root;
  args.rank = call->rank;
  args.nranks = call->nranks;
  args.inPlace = call->inPlace != 0;
  const braid::Status s = g.peer ? g.peer->enqueue(args, send, recv, stream)
                                 : g.single->enqueue(args, send, recv, stream);
  return report(s, error, errorBytes);
}

int check(void* group, int rank, char* error, size_t errorBytes) {
  auto& g = *static_cast<GroupHandle*>(group);
  return report(g.peer ? g.peer->check() : g.single->check(rank), error, errorBytes);
}

const BraidDevicePath kApi{sizeof(BraidDevicePath),
                           kBraidDevicePathVersion,
                           &createGroup,
                           &createPeerGroup,
                           &releaseGroup,
                           &enqueue,
                           &check};

}  // namespace

extern "C" __attribute__((visibility("default"))) const BraidDevicePath* braidDevicePath() {
  return &kApi;
}
