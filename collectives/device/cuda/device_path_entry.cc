// The C entry points libbraid finds with dlsym in libbraid_cuda.so (src/comm/device_path.cc).
// Plain functions over opaque handles, so the two libraries share no C++ object layout but
// coll::CollArgs, which both build from the same header.
#include <cstdio>
#include <memory>

#include "collectives/device/cuda/device_path_abi.h"
#include "collectives/device/cuda/single_device_group.h"

using braid::device::DeviceGroupOptions;
using braid::device::SingleDeviceGroup;

namespace {

using GroupHandle = std::shared_ptr<SingleDeviceGroup>;

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
  return new GroupHandle(std::move(*group));
}

void releaseGroup(void* group) { delete static_cast<GroupHandle*>(group); }

int enqueue(void* group, const braid::coll::CollArgs* args, const void* send, void* recv,
            void* stream, char* error, size_t errorBytes) {
  auto& g = *static_cast<GroupHandle*>(group);
  return report(g->enqueue(*args, send, recv, stream), error, errorBytes);
}

int check(void* group, int rank, char* error, size_t errorBytes) {
  auto& g = *static_cast<GroupHandle*>(group);
  return report(g->check(rank), error, errorBytes);
}

const BraidDevicePathV1 kApi{1, &createGroup, &releaseGroup, &enqueue, &check};

}  // namespace

extern "C" __attribute__((visibility("default"))) const BraidDevicePathV1* braidDevicePathV1() {
  return &kApi;
}
