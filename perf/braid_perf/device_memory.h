// CUDA device memory and streams for braid-perf's --memory device, behind a CUDA-free
// interface: braid-perf is built everywhere, and links the CUDA runtime only where braid
// was built with nvcc (BRAID_PERF_WITH_CUDA). Without it every call fails with a sentence
// saying so, which braid-perf prints and exits on before creating a communicator.
#pragma once

#include <cstddef>
#include <string>

#include "ranks.h"

namespace braid::perf {

/// Empty when `device` can hold buffers; otherwise why not (a build without CUDA, no
/// driver, no such device), as a sentence for the user.
std::string deviceUnavailableReason(int device);

/// Makes `device` current for the calling thread (CUDA's current device is per thread).
Outcome useDevice(int device);

/// One device allocation; freed with the object.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  /// Replaces the allocation with `bytes` zeroed bytes on the current device.
  Outcome allocate(size_t bytes);
  char* get() const { return pointer_; }

 private:
  char* pointer_ = nullptr;
};

/// Synchronous copies between host memory and device memory (ordered after the device's
/// completed work only: synchronize the rank's stream first).
Outcome copyToDevice(void* device, const void* host, size_t bytes);
Outcome copyToHost(void* host, const void* device, size_t bytes);

/// A non-blocking stream (it never waits on the legacy default stream), for one rank.
Outcome createStream(void** stream);
void destroyStream(void* stream);
/// Waits until everything enqueued on `stream` has finished.
Outcome synchronizeStream(void* stream);

}  // namespace braid::perf
