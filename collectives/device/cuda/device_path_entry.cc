// The C entry points libbraid finds with dlsym in libbraid_cuda.so (src/comm/device_path.cc).
// Plain functions over opaque handles, so the two libraries share no C++ object layout but
// coll::CollArgs, which both build from the same header. A handle holds either kind of
// group: ranks of one process on one GPU, or one rank of a cross-process (cuda_p2p) group.
#include <cuda_runtime.h>

#include <cstdio>
#include <memory>

#include "collectives/device/cuda/device_path_abi.h"
#include "collectives/device/cuda/ipc_group.h"
#include "collectives/device/cuda/single_device_group.h"

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

void* createGroup(int nranks, int device, char* error, size_t errorBytes) {
  auto group = SingleDeviceGroup::create(nranks, device, DeviceGroupOptions{});
  if (!group.isOk()) {
    report(group.status(), error, errorBytes);
    return nullptr;
  }
  return new GroupHandle{std::move(*group), nullptr};
}

void* createPeerGroup(int rank, int nranks, const void* buffer, BraidAllGatherFn allGather,
                      void* context, char* error, size_t errorBytes) {
  cudaPointerAttributes attributes{};
  const cudaError_t err = cudaPointerGetAttributes(&attributes, buffer);
  if (err != cudaSuccess || attributes.type != cudaMemoryTypeDevice) {
    std::snprintf(error, errorBytes, "rank %d: the buffer is not CUDA device memory (%s)", rank,
                  cudaGetErrorString(err));
    return nullptr;
  }
  auto exchange = [&](void* data, size_t bytes) -> braid::Status {
    char why[512] = "";
    if (allGather(context, data, bytes, why, sizeof(why)) == 0) return braid::Status::ok();
    return braid::internalError(std::string("exchanging device FIFO handles: ") + why);
  };
  auto group =
      IpcDeviceGroup::create(rank, nranks, attributes.device, PeerGroupOptions{}, exchange);
  if (!group.isOk()) {
    report(group.status(), error, errorBytes);
    return nullptr;
  }
  return new GroupHandle{nullptr, std::move(*group)};
}

void releaseGroup(void* group) { delete static_cast<GroupHandle*>(group); }

int enqueue(void* group, const braid::coll::CollArgs* args, const void* send, void* recv,
            void* stream, char* error, size_t errorBytes) {
  auto& g = *static_cast<GroupHandle*>(group);
  const braid::Status s = g.peer ? g.peer->enqueue(*args, send, recv, stream)
                                 : g.single->enqueue(*args, send, recv, stream);
  return report(s, error, errorBytes);
}

int check(void* group, int rank, char* error, size_t errorBytes) {
  auto& g = *static_cast<GroupHandle*>(group);
  return report(g.peer ? g.peer->check() : g.single->check(rank), error, errorBytes);
}

const BraidDevicePathV1 kApi{1, &createGroup, &releaseGroup, &enqueue, &check};
const BraidDevicePathV2 kApiV2{2, &kApi, &createPeerGroup};

}  // namespace

extern "C" __attribute__((visibility("default"))) const BraidDevicePathV1* braidDevicePathV1() {
  return &kApi;
}

extern "C" __attribute__((visibility("default"))) const BraidDevicePathV2* braidDevicePathV2() {
  return &kApiV2;
}
