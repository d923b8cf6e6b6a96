// The table libbraid_cuda.so hands to libbraid (see src/comm/device_path.h). Versioned: a
// libbraid that finds a different version refuses device buffers rather than guessing.
#pragma once

#include <cstddef>

#include "collectives/schedule.h"

extern "C" {

struct BraidDevicePathV1 {
  int version;  // 1
  /// A device group of `nranks` ranks on CUDA device `device`; null on failure (*error set).
  void* (*createGroup)(int nranks, int device, char* error, size_t errorBytes);
  void (*releaseGroup)(void* group);
  /// 0, or a failure (*error set): 1 internal, 2 invalid usage, 3 invalid argument.
  int (*enqueue)(void* group, const braid::coll::CollArgs* args, const void* send, void* recv,
                 void* stream, char* error, size_t errorBytes);
  int (*check)(void* group, int rank, char* error, size_t errorBytes);
};

/// Exported by libbraid_cuda.so.
const BraidDevicePathV1* braidDevicePathV1();
}
