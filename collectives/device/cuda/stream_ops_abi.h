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
