// The fallback way a stream waits for the device proxy: one thread spinning on a
// host-mapped flag (stream_ops_entry.cc uses it where cuStreamWaitValue32 is unavailable,
// or when BRAID_PROXY_STREAM_WAIT=kernel asks for it).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace braid::device {

/// Enqueues on `stream` a 1x1 kernel that returns once (int32_t)(*deviceFlag - value) >= 0.
/// `deviceFlag` is the device view of mapped pinned host memory.
cudaError_t launchWaitFlag(const uint32_t* deviceFlag, uint32_t value, cudaStream_t stream);

}  // namespace braid::device
