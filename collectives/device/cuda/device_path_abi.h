// The table libbraid_cuda.so hands to libbraid (see src/comm/device_path.h): one table of
// plain C functions and arguments, so the two libraries share no C++ object layout. It
// opens with its size and version, as NCCL's config structs do: a libbraid that finds
// another version, or a smaller table than it knows, refuses device buffers rather than
// guessing. A group handle holds either kind of group: ranks of one process on one GPU, or
// one rank of a cross-process (cuda_p2p) group.
#pragma once

#include <stddef.h>

extern "C" {

enum { kBraidDevicePathVersion = 4 };

/// One collective call, as the device executor needs it.
struct BraidDeviceCall {
  int kind;  // braid::coll::CollKind
  size_t count;
  int type;  // braidDataType_t
  int op;    // braidRedOp_t
  int root;
  int rank;
  int nranks;
  int inPlace;
};

/// The communicator's bootstrap allgather, called back during createPeerGroup: in, this
/// rank's `bytes` at data + rank * bytes; out, every rank's. 0, or a failure (*error set).
typedef int (*BraidAllGatherFn)(void* context, void* data, size_t bytes, char* error,
                                size_t errorBytes);

struct BraidDevicePath {
  size_t size;  // sizeof(BraidDevicePath) as libbraid_cuda.so was built
  int version;  // kBraidDevicePathVersion
  /// A device group of `nranks` ranks on CUDA device `device`; null on failure (*error set).
  /// `algorithm` and `protocol` are the communicator's BRAID_ALGO and BRAID_PROTO ("" or a
  /// spec, core/selection_spec.h).
  void* (*createGroup)(int nranks, int device, const char* algorithm, const char* protocol,
                       char* error, size_t errorBytes);
  /// Collective over the `nranks` ranks (one per call, each in its process): this rank of a
  /// cuda_p2p group on CUDA device `device` (the one the communicator's buffers are on);
  /// handles travel through allGather. Null on failure (*error set; every rank fails alike,
  /// see ipc_group.h).
  void* (*createPeerGroup)(int rank, int nranks, int device, const char* algorithm,
                           const char* protocol, BraidAllGatherFn allGather, void* context,
                           char* error, size_t errorBytes);
  void (*releaseGroup)(void* group);
  /// 0, or a failure (*error set): 1 internal, 2 invalid usage, 3 invalid argument.
  int (*enqueue)(void* group, const struct BraidDeviceCall* call, const void* send, void* recv,
                 void* stream, char* error, size_t errorBytes);
  int (*check)(void* group, int rank, char* error, size_t errorBytes);
};

/// Exported by libbraid_cuda.so.
const struct BraidDevicePath* braidDevicePath(void);
}
