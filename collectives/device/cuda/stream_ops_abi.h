// The second table libbraid_cuda.so exports: the stream operations of the device proxy
// (src/comm/device_proxy/stream_ops.h), as plain C over opaque handles. Like BraidDevicePath
// (device_path_abi.h) it opens with its size and version: a libbraid that finds another
// version, or a smaller table than it knows, refuses the proxy rather than guessing. The two
// libraries ship together, so there is one version at a time.
#pragma once

#include <stddef.h>
#include <stdint.h>

extern "C" {

enum { kBraidStreamOpsVersion = 1 };

/// Every int-returning entry: 0 on success, else 1 with *error set (a sentence). Entries
/// that take a stream also work while it is being captured into a CUDA graph, except
/// recordEvent (the proxy records no event on a captured stream).
struct BraidStreamOps {
  size_t size;  // sizeof(BraidStreamOps) as libbraid_cuda.so was built
  int version;  // kBraidStreamOpsVersion
  /// Pinned, mapped host memory; allowed while the calling thread's streams are captured.
  int (*allocHost)(size_t bytes, void** host, char* error, size_t errorBytes);
  void (*freeHost)(void* host);
  int (*createEvent)(void** event, char* error, size_t errorBytes);
  void (*destroyEvent)(void* event);
  /// toDevice: 1 host -> device, 0 device -> host. A memcpy node when `stream` is captured.
  int (*copyAsync)(void* dst, const void* src, size_t bytes, int toDevice, void* stream,
                   char* error, size_t errorBytes);
  /// Refused (1) on a stream being captured.
  int (*recordEvent)(void* event, void* stream, char* error, size_t errorBytes);
  /// 0: passed; 2: not yet; 1: the stream failed (*error set).
  int (*queryEvent)(void* event, char* error, size_t errorBytes);
  /// The stream waits until (int32_t)(*flag - value) >= 0; `flag` is allocHost memory.
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
  /// The calling thread's current device; and making `device` the calling thread's (the
  /// proxy thread's queries then use the application's context, not a new one on GPU 0),
  /// with its capture mode relaxed so its event queries stay allowed while an application
  /// thread captures in the global mode.
  int (*currentDevice)(int* device, char* error, size_t errorBytes);
  int (*useDevice)(int device, char* error, size_t errorBytes);
};

/// Exported by libbraid_cuda.so.
const struct BraidStreamOps* braidStreamOps(void);
}
