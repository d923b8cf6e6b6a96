// The device proxy's stream operations on real CUDA streams (the BraidStreamOps table of
// stream_ops_abi.h; the proxy itself is src/comm/device_proxy/device_proxy.h).
//
// How a stream waits for the proxy thread: cuStreamWaitValue32 (GEQ, cyclic) on the
// proxy's flag in mapped pinned host memory. It is a stream memory operation executed by
// the GPU's front end: no kernel, no SM, nothing to schedule, and the copy engine's
// staging->device copy follows it directly. The driver entry point is obtained through
// cudaGetDriverEntryPointByVersion, so this library links cudart only. Where the driver
// refuses stream memory operations (CUDA_ERROR_NOT_SUPPORTED) — or when
// BRAID_PROXY_STREAM_WAIT=kernel asks — a one-thread kernel spins on the same flag instead
// (wait_flag_kernel.h): portable, at the cost of one resident block while it waits.
// cudaLaunchHostFunc is not used: a host function that blocks stalls every other host
// function of the process, so ranks sharing a process could deadlock each other.
//
// While a stream is being captured into a CUDA graph, the copies and the flag wait become
// graph nodes (stream_ops_capture.h says how); pinned allocations and the proxy thread run in
// relaxed capture mode, since the global mode refuses calls that could synchronise while any
// stream of the process captures.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "collectives/device/cuda/stream_ops_abi.h"
#include "collectives/device/cuda/stream_ops_capture.h"
#include "collectives/device/cuda/wait_flag_kernel.h"

namespace {

using braid::device::capture::relaxed;
using WaitValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

int fail(const char* what, cudaError_t e, char* error, size_t errorBytes) {
  std::snprintf(error, errorBytes, "%s: %s", what, cudaGetErrorString(e));
  return 1;
}

// A stream inside cudaStreamBeginCapture: refused where an entry does not support it.
int refuseCapture(void* stream, char* error, size_t errorBytes) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t e = cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capture);
  if (e != cudaSuccess) return fail("cudaStreamIsCapturing", e, error, errorBytes);
  if (capture == cudaStreamCaptureStatusNone) return 0;
  std::snprintf(error, errorBytes,
                "the stream is being captured into a CUDA graph, where the host proxy records no "
                "event");
  return 1;
}

WaitValue32 driverWaitValue32() {
  static const WaitValue32 fn = [] {
    const char* choice = std::getenv("BRAID_PROXY_STREAM_WAIT");
    if (choice != nullptr && std::strcmp(choice, "kernel") == 0) return WaitValue32{nullptr};
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &p, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      return WaitValue32{nullptr};
    }
    return reinterpret_cast<WaitValue32>(p);
  }();
  return fn;
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

int createEvent(void** event, char* error, size_t errorBytes) {
  cudaError_t e =
      cudaEventCreateWithFlags(reinterpret_cast<cudaEvent_t*>(event), cudaEventDisableTiming);
  return e == cudaSuccess ? 0 : fail("cudaEventCreateWithFlags", e, error, errorBytes);
}

void destroyEvent(void* event) { cudaEventDestroy(static_cast<cudaEvent_t>(event)); }

int copyAsync(void* dst, const void* src, size_t bytes, int toDevice, void* stream, char* error,
              size_t errorBytes) {
  const cudaError_t e =
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream));
  return e == cudaSuccess ? 0
                          : fail(toDevice ? "cudaMemcpyAsync staging -> device"
                                          : "cudaMemcpyAsync device -> staging",
                                 e, error, errorBytes);
}

int recordEvent(void* event, void* stream, char* error, size_t errorBytes) {
  if (refuseCapture(stream, error, errorBytes) != 0) return 1;
  cudaError_t e =
      cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream));
  return e == cudaSuccess ? 0 : fail("cudaEventRecord", e, error, errorBytes);
}

int queryEvent(void* event, char* error, size_t errorBytes) {
  cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (e == cudaSuccess) return 0;
  if (e == cudaErrorNotReady) return 2;
  return fail("the stream failed before the proxy's staging copy", e, error, errorBytes);
}

int streamWaitFlag(void* stream, const uint32_t* flag, uint32_t value, char* error,
                   size_t errorBytes) {
  int capturing = 0;
  if (braid::device::capture::isCapturing(stream, &capturing, error, errorBytes) != 0) return 1;
  void* deviceFlag = nullptr;
  cudaError_t e = cudaHostGetDevicePointer(&deviceFlag, const_cast<uint32_t*>(flag), 0);
  if (e != cudaSuccess) {
    return fail("cudaHostGetDevicePointer of the proxy flag", e, error, errorBytes);
  }
  // Captured: the spin kernel, whose capture is plain kernel capture.
  WaitValue32 wait = capturing ? WaitValue32{nullptr} : driverWaitValue32();
  if (wait != nullptr) {
    CUresult r = wait(static_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(deviceFlag),
                      value, CU_STREAM_WAIT_VALUE_GEQ);
    if (r == CUDA_SUCCESS) return 0;
    if (r != CUDA_ERROR_NOT_SUPPORTED) {
      std::snprintf(error, errorBytes, "cuStreamWaitValue32 failed with CUresult %d", int(r));
      return 1;
    }
  }
  e = braid::device::launchWaitFlag(static_cast<const uint32_t*>(deviceFlag), value,
                                    static_cast<cudaStream_t>(stream));
  return e == cudaSuccess ? 0 : fail("launching the proxy's wait kernel", e, error, errorBytes);
}

int currentDevice(int* device, char* error, size_t errorBytes) {
  cudaError_t e = cudaGetDevice(device);
  return e == cudaSuccess ? 0 : fail("cudaGetDevice", e, error, errorBytes);
}

int useDevice(int device, char* error, size_t errorBytes) {
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) return fail("cudaSetDevice on the proxy thread", e, error, errorBytes);
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  e = cudaThreadExchangeStreamCaptureMode(&mode);
  return e == cudaSuccess ? 0 : fail("cudaThreadExchangeStreamCaptureMode", e, error, errorBytes);
}

const BraidStreamOps kStreamOps{sizeof(BraidStreamOps),
                                kBraidStreamOpsVersion,
                                &allocHost,
                                &freeHost,
                                &createEvent,
                                &destroyEvent,
                                &copyAsync,
                                &recordEvent,
                                &queryEvent,
                                &streamWaitFlag,
                                &braid::device::capture::isCapturing,
                                &braid::device::capture::launchHostFunc,
                                &braid::device::capture::retainWithCapture,
                                &braid::device::capture::streamWaitEvent,
                                &currentDevice,
                                &useDevice};

}  // namespace

extern "C" __attribute__((visibility("default"))) const BraidStreamOps* braidStreamOps() {
  return &kStreamOps;
}
