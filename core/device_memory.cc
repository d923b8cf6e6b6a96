#include "core/device_memory.h"

#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <cstdint>

namespace braid {
namespace {

// The few driver API values used here (cuda.h is not needed to build braid).
using CuPointerGetAttribute = int (*)(void* data, int attribute, uintptr_t ptr);
constexpr int kCudaSuccess = 0;
constexpr int kAttributeMemoryType = 2;     // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kAttributeIsManaged = 8;      // CU_POINTER_ATTRIBUTE_IS_MANAGED
constexpr int kAttributeDeviceOrdinal = 9;  // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
constexpr unsigned kMemoryTypeDevice = 2;   // CU_MEMORYTYPE_DEVICE

CuPointerGetAttribute driverQuery() {
  static std::atomic<CuPointerGetAttribute> cached{nullptr};
  static std::atomic<int64_t> nextLookNs{0};
  if (CuPointerGetAttribute q = cached.load(std::memory_order_acquire)) return q;
  // dlopen, even with RTLD_NOLOAD, walks the file system: tens of
  // microseconds. Look at most once a second, since the application may load
  // CUDA after its first collective.
  // The coarse clock is a plain memory read (no hardware clock access), so
  // the common case — no driver loaded — costs a few nanoseconds per buffer.
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  const int64_t now = int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  if (now < nextLookNs.load(std::memory_order_relaxed)) return nullptr;
  nextLookNs.store(now + 1000000000, std::memory_order_relaxed);
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) return nullptr;
  auto query = reinterpret_cast<CuPointerGetAttribute>(dlsym(driver, "cuPointerGetAttribute"));
  cached.store(query, std::memory_order_release);
  return query;
}

std::atomic<DeviceMemoryQuery> testQuery{nullptr};

}  // namespace

void setDeviceMemoryQueryForTesting(DeviceMemoryQuery query) {
  testQuery.store(query, std::memory_order_release);
}

bool isDeviceMemory(const void* ptr) {
  if (ptr == nullptr) return false;
  if (DeviceMemoryQuery fake = testQuery.load(std::memory_order_acquire)) return fake(ptr);
  CuPointerGetAttribute query = driverQuery();
  if (query == nullptr) return false;
  unsigned memoryType = 0;
  if (query(&memoryType, kAttributeMemoryType, reinterpret_cast<uintptr_t>(ptr)) != kCudaSuccess) {
    return false;  // unknown to CUDA: ordinary host memory
  }
  if (memoryType != kMemoryTypeDevice) return false;
  int managed = 0;
  query(&managed, kAttributeIsManaged, reinterpret_cast<uintptr_t>(ptr));
  return managed == 0;
}

int deviceOrdinal(const void* ptr) {
  if (ptr == nullptr) return -1;
  // The caller has its answer from isDeviceMemory already: not asked again.
  if (testQuery.load(std::memory_order_acquire) != nullptr) return 0;
  CuPointerGetAttribute query = driverQuery();
  int ordinal = -1;
  if (query == nullptr ||
      query(&ordinal, kAttributeDeviceOrdinal, reinterpret_cast<uintptr_t>(ptr)) != kCudaSuccess) {
    return -1;
  }
  return ordinal;
}

}  // namespace braid
