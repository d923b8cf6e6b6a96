// Routing CUDA device buffers to the device executor, without linking CUDA into braid.
//
// The device path lives in libbraid_cuda.so (built where nvcc is found, installed beside
// libbraid). braid loads it with dlopen only when an application asks for CUDA devices
// (braidCommInitAll with a devlist), so CPU-only programs never load CUDA. Three cases:
// - every rank of braidCommInitAll on the same device (a single GPU hosting a whole
//   communicator): the ranks share one device-memory FIFO group, and each call enqueues its
//   rank's kernel on the caller's stream;
// - communicators of one rank per process on one node (braidCommInitRank,
//   braidCommInitFromEnv): their first collective on device buffers creates a cuda_p2p group
//   (collectives/device/cuda/ipc_group.h, over transports/cuda_p2p/) on the buffer's device,
//   collectively over the bootstrap. NCCL binds the device at init, braid at first use, so
//   host-only programs never touch CUDA. Calls enqueue kernels as above;
// - any other communicator (ranks on several hosts, BRAID_P2P_DISABLE=1, or a cuda_p2p setup
//   that failed on every rank) goes through its host proxy (comm/device_proxy/): staged in
//   pinned host memory, moved by the host transports, still enqueued on the caller's stream.
// Which of these a communicator takes is its own state (comm/device_side.h), owned by the
// Comm and released with it.
#pragma once

#include <string>
#include <vector>

#include "comm/op.h"
#include "core/status.h"

namespace braid {

class Comm;

/// Where libbraid looks first for libbraid_cuda.so: beside the file libbraid itself was
/// loaded from (the static library: beside the executable's braid code). Empty if unknown.
std::string deviceLibraryCandidate();

/// Whether braidCommInitAll can give these ranks CUDA devices; *why says why not.
bool deviceListSupported(const int* devlist, int ndev, std::string* why);

/// Binds the ranks of one braidCommInitAll to a shared device group on devlist[0].
Status attachDeviceGroup(const std::vector<Comm*>& comms, const int* devlist);

/// Lets `comm` (one rank of a communicator whose ranks are in several processes of one
/// host) create a cuda_p2p group on its first device-buffer collective.
void allowPeerDevices(Comm* comm);

/// `name` from libbraid_cuda.so (loading it if needed), or null and *why.
void* deviceLibrarySymbol(const char* name, std::string* why);

/// Where `op`'s buffers live: one driver query per distinct buffer. The C API stores the
/// answer in op.memory once per call; everything after reads it from there.
BufferMemory decideMemory(const Op& op);

/// True when `op.memory` names device memory: it then skips the host-only checks and runs
/// through enqueueOnDevice (the communicator's device group, or else its host proxy).
inline bool onDevicePath(const Op& op) { return op.memory != BufferMemory::kHost; }

/// An error unless both of `op`'s buffers (where given) are device memory.
Status checkDeviceBuffers(const Op& op);

/// Enqueues `op` (validated) on `stream` (a cudaStream_t) and returns. A device group's
/// kernels run collectives but all-to-all-v; the host proxy runs every op.
Status enqueueOnDevice(const Op& op, void* stream);

/// Enqueues the device ops of one braidGroupStart/End (validated; ops[i] on streams[i]):
/// per communicator, on its device group one by one, or through its proxy as one group.
Status enqueueDeviceGroup(const std::vector<Op>& ops, const std::vector<void*>& streams);

}  // namespace braid
