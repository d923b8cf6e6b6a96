// What the device proxy needs of CUDA to record calls into a graph (the capture entries of
// BraidStreamOps, stream_ops_abi.h; the proxy's side is src/comm/device_proxy/
// device_proxy_capture.cc). Same error convention as the table: 0, or 1 with *error set.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace braid::device::capture {

/// Runs `call` with this thread's capture mode relaxed, then restores it: the global mode
/// refuses calls that could synchronise (pinned allocations) while any stream captures.
template <typename Call>
cudaError_t relaxed(Call call) {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&mode);
  const cudaError_t e = call();
  cudaThreadExchangeStreamCaptureMode(&mode);
  return e;
}

int isCapturing(void* stream, int* capturing, char* error, size_t errorBytes);
int launchHostFunc(void* stream, void (*fn)(void*), void* arg, char* error, size_t errorBytes);
int retainWithCapture(void* stream, void (*destroy)(void*), void* arg, char* error,
                      size_t errorBytes);
int streamWaitEvent(void* stream, void* event, char* error, size_t errorBytes);

}  // namespace braid::device::capture
