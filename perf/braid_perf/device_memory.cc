// See device_memory.h. The CUDA half is compiled only with BRAID_PERF_WITH_CUDA; the other
// half answers every call with the same refusal.
#include "device_memory.h"

#if BRAID_PERF_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace braid::perf {

#if BRAID_PERF_WITH_CUDA
namespace {

Outcome fromCuda(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return Outcome::success();
  return Outcome::failure(std::string(what) + ": " + cudaGetErrorString(error));
}

}  // namespace

std::string deviceUnavailableReason(int device) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    return std::string("no usable CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(error) +
           ")";
  }
  if (device < 0 || device >= count) {
    return "CUDA device " + std::to_string(device) + " does not exist (this machine has " +
           std::to_string(count) + ")";
  }
  return "";
}

Outcome useDevice(int device) { return fromCuda(cudaSetDevice(device), "cudaSetDevice"); }

DeviceBuffer::~DeviceBuffer() {
  if (pointer_ != nullptr) cudaFree(pointer_);
}

Outcome DeviceBuffer::allocate(size_t bytes) {
  if (pointer_ != nullptr) cudaFree(pointer_);
  pointer_ = nullptr;
  void* p = nullptr;
  Outcome outcome = fromCuda(cudaMalloc(&p, bytes), "cudaMalloc");
  if (!outcome.ok()) return outcome;
  pointer_ = static_cast<char*>(p);
  return fromCuda(cudaMemset(p, 0, bytes), "cudaMemset");
}

Outcome copyToDevice(void* device, const void* host, size_t bytes) {
  if (bytes == 0) return Outcome::success();
  return fromCuda(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice),
                  "cudaMemcpy to the device");
}

Outcome copyToHost(void* host, const void* device, size_t bytes) {
  if (bytes == 0) return Outcome::success();
  return fromCuda(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost),
                  "cudaMemcpy to the host");
}

Outcome createStream(void** stream) {
  cudaStream_t s = nullptr;
  Outcome outcome =
      fromCuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  *stream = s;
  return outcome;
}

void destroyStream(void* stream) {
  if (stream != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}

Outcome synchronizeStream(void* stream) {
  return fromCuda(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)),
                  "cudaStreamSynchronize");
}

#else  // built without CUDA

namespace {
const char* const kNoCuda =
    "this braid-perf was built without CUDA (no nvcc when braid was configured)";
Outcome noCuda() { return Outcome::failure(kNoCuda); }
}  // namespace

std::string deviceUnavailableReason(int) { return kNoCuda; }
Outcome useDevice(int) { return noCuda(); }
DeviceBuffer::~DeviceBuffer() = default;
Outcome DeviceBuffer::allocate(size_t) { return noCuda(); }
Outcome copyToDevice(void*, const void*, size_t) { return noCuda(); }
Outcome copyToHost(void*, const void*, size_t) { return noCuda(); }
Outcome createStream(void** stream) {
  *stream = nullptr;
  return noCuda();
}
void destroyStream(void*) {}
Outcome synchronizeStream(void*) { return noCuda(); }

#endif

}  // namespace braid::perf
