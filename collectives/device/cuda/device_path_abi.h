// The tables libbraid_cuda.so hands to libbraid (see src/comm/device_path.h). Versioned: a
// libbraid that finds a different version refuses device buffers rather than guessing.
// V1: ranks of one process on one device. V2 (a separate export, so a V1-only libbraid
// still finds V1): V1's entries plus groups whose ranks are in several processes
// (cuda_p2p). Group handles from either table work with V1's enqueue, check and release.
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

/// The communicator's bootstrap allgather, called back during createPeerGroup: in, this
/// rank's `bytes` at data + rank * bytes; out, every rank's. 0, or a failure (*error set).
typedef int (*BraidAllGatherFn)(void* context, void* data, size_t bytes, char* error,
                                size_t errorBytes);

struct BraidDevicePathV2 {
  int version;  // 2
  const BraidDevicePathV1* v1;
  /// Collective over the `nranks` ranks (one per call, each in its process): this rank of a
  /// cuda_p2p group on the device that holds `buffer`; handles travel through allGather.
  /// Null on failure (*error set; every rank fails alike, see ipc_group.h).
  void* (*createPeerGroup)(int rank, int nranks, const void* buffer, BraidAllGatherFn allGather,
                           void* context, char* error, size_t errorBytes);
};

/// Exported by libbraid_cuda.so.
const BraidDevicePathV1* braidDevicePathV1();
const BraidDevicePathV2* braidDevicePathV2();
}
