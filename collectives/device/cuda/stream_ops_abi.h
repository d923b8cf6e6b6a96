// The second table libbraid_cuda.so exports: the stream operations of the device proxy
// (src/comm/device_proxy/stream_ops.h), as plain C over opaque handles. Separate from
// BraidDevicePathV1 (device_path_abi.h), which stays as it was: a libbraid that knows only
// V1 never asks for this symbol, and one that finds a different version refuses the proxy.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

/// Every int-returning entry: 0 on success, else 1 with *error set (a sentence).
struct BraidStreamOpsV1 {
  int version;  // 1
  int (*allocHost)(size_t bytes, void** host, char* error, size_t errorBytes);
  void (*freeHost)(void* host);
  int (*createEvent)(void** event, char* error, size_t errorBytes);
  void (*destroyEvent)(void* event);
  /// toDevice: 1 host -> device, 0 device -> host.
  int (*copyAsync)(void* dst, const void* src, size_t bytes, int toDevice, void* stream,
                   char* error, size_t errorBytes);
  int (*recordEvent)(void* event, void* stream, char* error, size_t errorBytes);
  /// 0: passed; 2: not yet; 1: the stream failed (*error set).
  int (*queryEvent)(void* event, char* error, size_t errorBytes);
  /// The stream waits until (int32_t)(*flag - value) >= 0; `flag` is allocHost memory.
  int (*streamWaitFlag)(void* stream, const uint32_t* flag, uint32_t value, char* error,
                        size_t errorBytes);
  /// The calling thread's current device; and making `device` the calling thread's (the
  /// proxy thread's queries then use the application's context, not a new one on GPU 0).
  int (*currentDevice)(int* device, char* error, size_t errorBytes);
  int (*useDevice)(int device, char* error, size_t errorBytes);
};

/// Exported by libbraid_cuda.so.
const BraidStreamOpsV1* braidStreamOpsV1();
}

extern "C" {

/// The third table (this file's second): what the proxy needs to record calls into a CUDA
/// graph (src/comm/device_proxy/device_proxy_capture.cc). V1 stays as it was, and still
/// refuses captured streams; a libbraid that finds V2 uses these entries instead of V1's
/// allocHost, freeHost, copyAsync and streamWaitFlag. Same error convention as V1.
struct BraidStreamOpsV2 {
  int version;                 // 2
  const BraidStreamOpsV1* v1;  // the other entries
  /// As V1's, and allowed while the calling thread's streams are being captured.
  int (*allocHost)(size_t bytes, void** host, char* error, size_t errorBytes);
  void (*freeHost)(void* host);
  /// As V1's, and recorded into the graph when `stream` is being captured.
  int (*copyAsync)(void* dst, const void* src, size_t bytes, int toDevice, void* stream,
                   char* error, size_t errorBytes);
  int (*streamWaitFlag)(void* stream, const uint32_t* flag, uint32_t value, char* error,
                        size_t errorBytes);
  /// *capturing = 1 when `stream` is being captured, 0 when not; 1 (error) when the capture
  /// was invalidated.
  int (*isCapturing)(void* stream, int* capturing, char* error, size_t errorBytes);
  /// fn(arg) on a CUDA host thread once the stream reaches it (a host node when captured).
  int (*launchHostFunc)(void* stream, void (*fn)(void*), void* arg, char* error, size_t errorBytes);
  /// destroy(arg) once the graph being captured on `stream` and its instances are gone.
  int (*retainWithCapture)(void* stream, void (*destroy)(void*), void* arg, char* error,
                           size_t errorBytes);
  /// `stream` waits for the last record of `event`.
  int (*streamWaitEvent)(void* stream, void* event, char* error, size_t errorBytes);
  /// As V1's, and relaxes the calling (proxy) thread's capture mode, so its event queries
  /// stay allowed while an application thread captures in the global mode.
  int (*useDevice)(int device, char* error, size_t errorBytes);
};

/// Exported by libbraid_cuda.so (newer builds).
const BraidStreamOpsV2* braidStreamOpsV2();
}
