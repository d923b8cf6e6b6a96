// libone_gpu.so, preloaded into nccl-tests by the GPU kit: the program sees ONE_GPU_DEVICES
// devices (default 2), all of them GPU 0.
//
// nccl-tests gives rank i of `-g G` device i and refuses G larger than the device count, so 2
// ranks need 2 GPUs; braid runs several ranks on one GPU, and the kit's machine has one.
// Preloaded, this answers the program's own CUDA calls that count or name devices as if there
// were ONE_GPU_DEVICES of them, mapping ordinal N to N % (real count). Calls from any other
// library (braid's among them) are passed through untouched, so the library under test sees
// the real machine. Only the calls nccl-tests makes with an ordinal are wrapped.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef int cudaError_t;  // an enum in cuda_runtime_api.h; 0 is cudaSuccess

// Whether `address` lies in the main program (the first object dl_iterate_phdr lists).
struct Lookup {
  uintptr_t address;
  int found;
};

static int inFirstObject(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct Lookup* lookup = data;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* segment = &info->dlpi_phdr[i];
    if (segment->p_type != PT_LOAD) continue;
    const uintptr_t start = info->dlpi_addr + segment->p_vaddr;
    if (lookup->address >= start && lookup->address < start + segment->p_memsz) lookup->found = 1;
  }
  return 1;  // stop after the main program
}

static int fromProgram(void* caller) {
  struct Lookup lookup = {(uintptr_t)caller, 0};
  dl_iterate_phdr(inFirstObject, &lookup);
  return lookup.found;
}

static int realCount(void) {
  static int count = 0;
  if (count == 0) {
    cudaError_t (*real)(int*) = (cudaError_t(*)(int*))dlsym(RTLD_NEXT, "cudaGetDeviceCount");
    int n = 0;
    if (real != NULL && real(&n) == 0 && n > 0) count = n;
  }
  return count;
}

static int mapped(int device, void* caller) {
  const int count = realCount();
  return fromProgram(caller) && count > 0 && device >= 0 ? device % count : device;
}

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, name))

cudaError_t cudaGetDeviceCount(int* count) {
  cudaError_t status = REAL("cudaGetDeviceCount", cudaError_t(*)(int*))(count);
  if (status == 0 && *count > 0 && fromProgram(__builtin_return_address(0))) {
    const char* wanted = getenv("ONE_GPU_DEVICES");
    const int devices = wanted != NULL ? atoi(wanted) : 2;
    if (devices > *count) *count = devices;
  }
  return status;
}

cudaError_t cudaSetDevice(int device) {
  return REAL("cudaSetDevice", cudaError_t(*)(int))(mapped(device, __builtin_return_address(0)));
}

cudaError_t cudaDeviceGetAttribute(int* value, int attribute, int device) {
  return REAL("cudaDeviceGetAttribute", cudaError_t(*)(int*, int, int))(
      value, attribute, mapped(device, __builtin_return_address(0)));
}

// CUDA 12 headers name it cudaGetDeviceProperties_v2, CUDA 13 cudaGetDeviceProperties.
cudaError_t cudaGetDeviceProperties(void* properties, int device) {
  return REAL("cudaGetDeviceProperties", cudaError_t(*)(void*, int))(
      properties, mapped(device, __builtin_return_address(0)));
}

cudaError_t cudaGetDeviceProperties_v2(void* properties, int device) {
  return REAL("cudaGetDeviceProperties_v2", cudaError_t(*)(void*, int))(
      properties, mapped(device, __builtin_return_address(0)));
}

cudaError_t cudaDeviceGetPCIBusId(char* busId, int length, int device) {
  return REAL("cudaDeviceGetPCIBusId", cudaError_t(*)(char*, int, int))(
      busId, length, mapped(device, __builtin_return_address(0)));
}
