// BraidStreamOpsV2 (stream_ops_abi.h): the stream operations the device proxy needs to
// record calls into a CUDA graph (src/comm/device_proxy/device_proxy_capture.cc), beside
// V1's (stream_ops_entry.cc), which still refuse captured streams for a libbraid that only
// knows V1.
//
// While a stream is captured: copies become memcpy nodes; the flag wait becomes the spin
// kernel (wait_flag_kernel.h), whose capture is plain kernel capture (a stream memory
// operation would need the driver to support it in graphs, which this code does not rely
// on); the hand-over to the proxy is a host node (cudaLaunchHostFunc, which returns at
// once: it only queues work); the proxy's per-call memory is tied to the graph with a user
// object. Pinned allocations are made in relaxed capture mode, since the global mode
// refuses calls that could synchronise while any stream of the process captures.
#include <cuda_runtime.h>

#include <cstdio>

#include "collectives/device/cuda/stream_ops_abi.h"
#include "collectives/device/cuda/wait_flag_kernel.h"

namespace {

int fail(const char* what, cudaError_t e, char* error, size_t errorBytes) {
  std::snprintf(error, errorBytes, "%s: %s", what, cudaGetErrorString(e));
  return 1;
}

// Runs `call` with this thread's capture mode relaxed, then restores it.
template <typename Call>
cudaError_t relaxed(Call call) {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&mode);
  const cudaError_t e = call();
  cudaThreadExchangeStreamCaptureMode(&mode);
  return e;
}

int allocHost(size_t bytes, void** host, char* error, size_t errorBytes) {
  const cudaError_t e = relaxed(
      [&] { return cudaHostAlloc(host, bytes, cudaHostAllocMapped | cudaHostAllocPortable); });
  return e == cudaSuccess
             ? 0
             : fail("cudaHostAlloc of the proxy's staging memory", e, error, errorBytes);
}

void freeHost(void* host) {
  relaxed([&] { return cudaFreeHost(host); });
}

int copyAsync(void* dst, const void* src, size_t bytes, int toDevice, void* stream, char* error,
              size_t errorBytes) {
  const cudaError_t e =
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream));
  return e == cudaSuccess ? 0
                          : fail(toDevice ? "cudaMemcpyAsync staging -> device"
                                          : "cudaMemcpyAsync device -> staging",
                                 e, error, errorBytes);
}

int isCapturing(void* stream, int* capturing, char* error, size_t errorBytes) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t e = cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &status);
  if (e != cudaSuccess) return fail("cudaStreamIsCapturing", e, error, errorBytes);
  if (status == cudaStreamCaptureStatusInvalidated) {
    std::snprintf(error, errorBytes, "the stream's CUDA graph capture was invalidated");
    return 1;
  }
  *capturing = status == cudaStreamCaptureStatusActive ? 1 : 0;
  return 0;
}

int streamWaitFlag(void* stream, const uint32_t* flag, uint32_t value, char* error,
                   size_t errorBytes) {
  int capturing = 0;
  if (isCapturing(stream, &capturing, error, errorBytes) != 0) return 1;
  if (!capturing) return braidStreamOpsV1()->streamWaitFlag(stream, flag, value, error, errorBytes);
  void* deviceFlag = nullptr;
  cudaError_t e = cudaHostGetDevicePointer(&deviceFlag, const_cast<uint32_t*>(flag), 0);
  if (e != cudaSuccess) {
    return fail("cudaHostGetDevicePointer of the proxy flag", e, error, errorBytes);
  }
  e = braid::device::launchWaitFlag(static_cast<const uint32_t*>(deviceFlag), value,
                                    static_cast<cudaStream_t>(stream));
  return e == cudaSuccess ? 0 : fail("capturing the proxy's wait kernel", e, error, errorBytes);
}

int launchHostFunc(void* stream, void (*fn)(void*), void* arg, char* error, size_t errorBytes) {
  const cudaError_t e = cudaLaunchHostFunc(static_cast<cudaStream_t>(stream), fn, arg);
  return e == cudaSuccess ? 0 : fail("cudaLaunchHostFunc", e, error, errorBytes);
}

int retainWithCapture(void* stream, void (*destroy)(void*), void* arg, char* error,
                      size_t errorBytes) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  cudaError_t e =
      cudaStreamGetCaptureInfo(static_cast<cudaStream_t>(stream), &status, nullptr, &graph);
  if (e != cudaSuccess) return fail("cudaStreamGetCaptureInfo", e, error, errorBytes);
  if (status != cudaStreamCaptureStatusActive || graph == nullptr) {
    std::snprintf(error, errorBytes, "the stream is not being captured");
    return 1;
  }
  cudaUserObject_t object = nullptr;
  e = cudaUserObjectCreate(&object, arg, destroy, 1, cudaUserObjectNoDestructorSync);
  if (e != cudaSuccess) return fail("cudaUserObjectCreate", e, error, errorBytes);
  // The graph takes our reference: the object lives while the graph or an instance does.
  e = cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove);
  if (e != cudaSuccess) {
    cudaUserObjectRelease(object, 1);
    return fail("cudaGraphRetainUserObject", e, error, errorBytes);
  }
  return 0;
}

int streamWaitEvent(void* stream, void* event, char* error, size_t errorBytes) {
  const cudaError_t e =
      cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0);
  return e == cudaSuccess ? 0 : fail("cudaStreamWaitEvent", e, error, errorBytes);
}

int useDevice(int device, char* error, size_t errorBytes) {
  if (braidStreamOpsV1()->useDevice(device, error, errorBytes) != 0) return 1;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  const cudaError_t e = cudaThreadExchangeStreamCaptureMode(&mode);
  return e == cudaSuccess ? 0 : fail("cudaThreadExchangeStreamCaptureMode", e, error, errorBytes);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const BraidStreamOpsV2* braidStreamOpsV2() {
  static const BraidStreamOpsV2 table{2,
                                      braidStreamOpsV1(),
                                      &allocHost,
                                      &freeHost,
                                      &copyAsync,
                                      &streamWaitFlag,
                                      &isCapturing,
                                      &launchHostFunc,
                                      &retainWithCapture,
                                      &streamWaitEvent,
                                      &useDevice};
  return &table;
}
