// What lets the device executor's protocol code compile twice: as CUDA __device__ code (nvcc)
// and as plain host C++ (g++), so that every protocol and executor path is tested on CPUs in CI.
//
// Code written against this header uses only:
//   BRAID_HD          — marks a function callable on host and device;
//   Group             — the cooperating threads that run one channel: a CUDA thread block on
//                       the device, one host thread in CPU tests. Data loops stride by
//                       group.rank() / group.size(); control decisions are taken by the
//                       leader and shared through group.agree(), so every thread of a block
//                       always takes the same branch (a divergent __syncthreads would hang).
#pragma once

#include <cstddef>
#include <cstdint>

#if !defined(__CUDA_ARCH__)
#include <thread>
#endif

#if defined(__CUDACC__)
#define BRAID_HD __host__ __device__ __forceinline__
#define BRAID_DEVICE_ONLY __device__ __forceinline__
#else
#define BRAID_HD inline
#endif

// True while compiling the device side of a .cu file.
#if defined(__CUDA_ARCH__)
#define BRAID_ON_DEVICE 1
#else
#define BRAID_ON_DEVICE 0
#endif

namespace braid::device {

#if BRAID_ON_DEVICE
/// The threads of one CUDA block, working on one channel.
class Group {
 public:
  __device__ int rank() const { return threadIdx.x; }
  __device__ int size() const { return blockDim.x; }
  __device__ bool leader() const { return threadIdx.x == 0; }
  __device__ void sync() const { __syncthreads(); }
  /// Every thread gets the leader's `value`. One shared word per block suffices: the two
  /// barriers keep a later agree() from overwriting it before all threads have read it.
  __device__ bool agree(bool value) const {
    __shared__ int shared;
    if (leader()) shared = value ? 1 : 0;
    __syncthreads();
    const bool result = shared != 0;
    __syncthreads();
    return result;
  }
  /// Whether `value` is true on any thread of the block.
  __device__ bool any(bool value) const { return __syncthreads_or(value ? 1 : 0) != 0; }
};

/// Backs off while waiting on a peer, so spinning blocks leave issue slots to others.
__device__ __forceinline__ void spinPause() { __nanosleep(64); }
#else
/// A single host thread standing in for a thread block (CPU tests of the device code).
class Group {
 public:
  int rank() const { return 0; }
  int size() const { return 1; }
  bool leader() const { return true; }
  void sync() const {}
  bool agree(bool value) const { return value; }
  bool any(bool value) const { return value; }
};

/// Host tests run more "blocks" than cores: yield so that the peer we wait on can run.
inline void spinPause() { std::this_thread::yield(); }
#endif

}  // namespace braid::device
