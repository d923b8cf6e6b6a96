// One thread spinning on a host-mapped flag (see wait_flag_kernel.h). It occupies one
// thread block slot while it waits, which is why cuStreamWaitValue32 (no SM at all) is the
// first choice; the kernel is the portable fallback.
#include "collectives/device/cuda/wait_flag_kernel.h"

namespace braid::device {
namespace {

__device__ uint32_t loadAcquireSystem(const uint32_t* p) {
  uint32_t v;
  // System scope: the host writes the flag; acquire orders the stream's later work after it.
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__global__ void waitFlagKernel(const uint32_t* flag, uint32_t value) {
  while (static_cast<int32_t>(loadAcquireSystem(flag) - value) < 0) __nanosleep(1000);
}

}  // namespace

cudaError_t launchWaitFlag(const uint32_t* deviceFlag, uint32_t value, cudaStream_t stream) {
  waitFlagKernel<<<1, 1, 0, stream>>>(deviceFlag, value);
  return cudaGetLastError();
}

}  // namespace braid::device
