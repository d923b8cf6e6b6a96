// Small CUDA runtime helpers shared by the cuda_p2p transport and the device groups above it
// (collectives/device/cuda/): errors as Status, a scoped current device, and uploads of host
// vectors on a private stream.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "core/status.h"

namespace braid::device {

inline Status cudaStatus(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::ok();
  return internalError(std::string("CUDA: ") + what + ": " + cudaGetErrorString(err));
}

#define BRAID_CUDA_RETURN(call) BRAID_RETURN_IF_ERROR(::braid::device::cudaStatus((call), #call))

/// Makes `device` current for the scope and restores the caller's device after.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    cudaGetDevice(&previous_);
    if (previous_ != device) cudaSetDevice(device);
  }
  ~DeviceScope() { cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

/// Copies `host` into new device memory (recorded in `owned`) through `stream`, a private
/// non-blocking stream: a synchronous cudaMemcpy would run on the legacy default stream and
/// wait for the caller's kernels of an earlier collective, which may be waiting for a peer's
/// next call.
template <class T>
Result<T*> uploadVector(const std::vector<T>& host, cudaStream_t stream,
                        std::vector<void*>* owned) {
  void* p = nullptr;
  BRAID_CUDA_RETURN(cudaMalloc(&p, host.size() * sizeof(T) + 1));
  owned->push_back(p);
  if (!host.empty()) {
    BRAID_CUDA_RETURN(
        cudaMemcpyAsync(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
    BRAID_CUDA_RETURN(cudaStreamSynchronize(stream));
  }
  return static_cast<T*>(p);
}

}  // namespace braid::device
