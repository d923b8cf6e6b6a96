#include "core/device_memory.h"

#include <dlfcn.h>

#include <cstdint>

namespace braid {
namespace {

// The few driver API values used here (cuda.h is not needed to build braid).
using CuPointerGetAttribute = int (*)(void* data, int attribute, uintptr_t ptr);
constexpr int kCudaSuccess = 0;
constexpr int kAttributeMemoryType = 2;    // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kAttributeIsManaged = 8;     // CU_POINTER_ATTRIBUTE_IS_MANAGED
constexpr unsigned kMemoryTypeDevice = 2;  // CU_MEMORYTYPE_DEVICE

CuPointerGetAttribute driverQuery() {
  // Not cached when absent: the application may load CUDA after its first call.
  static CuPointerGetAttribute cached = nullptr;
  if (cached != nullptr) return cached;
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) return nullptr;
  cached = reinterpret_cast<CuPointerGetAttribute>(dlsym(driver, "cuPointerGetAttribute"));
  return cached;
}

}  // namespace

bool isDeviceMemory(const void* ptr) {
  if (ptr == nullptr) return false;
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

}  // namespace braid
