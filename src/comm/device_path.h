// Routing CUDA device buffers to the device executor, without linking CUDA into braid.
//
// The device path lives in libbraid_cuda.so (built where nvcc is found, installed beside
// libbraid). braid loads it with dlopen only when an application asks for CUDA devices
// (braidCommInitAll with a devlist), so CPU-only programs never load CUDA. Two cases are
// served: every rank of braidCommInitAll on the same device (a single GPU hosting a whole
// communicator; the ranks share one device-memory FIFO group), and communicators of one
// rank per process on one node (braidCommInitRank, braidCommInitFromEnv): their first
// collective on device buffers creates a cuda_p2p group (collectives/device/cuda/
// ipc_group.h) on the buffer's device, collectively over the bootstrap — NCCL binds the
// device at init, braid at first use, so host-only programs never touch CUDA. Each call
// then enqueues its rank's kernel on the caller's stream. Anything else with device memory
// is refused with braidInvalidUsage, as before.
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

/// Lets `comm` (one rank of a communicator whose ranks are in several processes) create a
/// cuda_p2p group on its first device-buffer collective.
void allowPeerDevices(Comm* comm);

/// Forgets `comm`'s device binding (call before deleting it). No-op for host comms.
void detachDevice(Comm* comm);

/// True when `op` names device memory on a communicator bound to a device group (or allowed
/// one by allowPeerDevices): it then skips the host-only checks and runs through
/// enqueueOnDevice.
bool onDevicePath(const Op& op);

/// Enqueues `op` (validated) on `stream` (a cudaStream_t) and returns.
Status enqueueOnDevice(const Op& op, void* stream);

}  // namespace braid
