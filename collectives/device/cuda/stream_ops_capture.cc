// The capture entries of BraidStreamOps (stream_ops_capture.h): how the device proxy records
// calls into a CUDA graph (src/comm/device_proxy/device_proxy_capture.cc).
//
// While a stream is captured: copies become memcpy nodes; the flag wait becomes the spin
// kernel (wait_flag_kernel.h; stream_ops_entry.cc picks it), whose capture is plain kernel
// capture (a stream memory operation would need the driver to support it in graphs, which
// this code does not rely on); the hand-over to the proxy is a host node
// (cudaLaunchHostFunc, which returns at once: it only queues work); the proxy's per-call
// memory is tied to the graph with a user object.
#include "collectives/device/cuda/stream_ops_capture.h"

#include <cstdio>

namespace braid::device::capture {
namespace {

int fail(const char* what, cudaError_t e, char* error, size_t errorBytes) {
  std::snprintf(error, errorBytes, "%s: %s", what, cudaGetErrorString(e));
  return 1;
}

}  // namespace

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

}  // namespace braid::device::capture
