// IpcRegions (see the header): the receive region and its export, the two exchange rounds,
// opening peers' regions.
#include "transports/cuda_p2p/cuda/ipc_regions.h"

#include <cuda_runtime.h>

#include <cstring>

#include "transports/cuda_p2p/cuda/cuda_support.h"

namespace braid::transport::cuda_p2p {

using device::cudaStatus;
using device::DeviceScope;

static_assert(sizeof(cudaIpcMemHandle_t) == kIpcHandleBytes, "IPC handle size changed");

Result<std::unique_ptr<IpcRegions>> IpcRegions::create(int rank, int nranks, int device,
                                                       const PeerFifoConfig& fifos,
                                                       const Status& local,
                                                       const PeerAllGather& allGather) {
  std::unique_ptr<IpcRegions> regions(new IpcRegions(rank, nranks, device, fifos));
  // Round 1: every rank sends a record, a failed one included, so nobody waits for it.
  std::vector<PeerRecord> records(static_cast<size_t>(nranks));
  PeerRecord& mine = records[size_t(rank)];
  mine.processToken = thisProcessToken();
  mine.config = fifos;
  const Status set = (local.isOk() ? regions->allocate(&mine) : local)
                         .withContext("device group: rank " + std::to_string(rank) +
                                      " could not set up its device FIFOs");
  if (!set.isOk()) {
    mine.failed = 1;
    setPeerError(mine.error, set.message());
  }
  BRAID_RETURN_IF_ERROR(allGather(records.data(), sizeof(PeerRecord)));
  BRAID_RETURN_IF_ERROR(set);
  BRAID_RETURN_IF_ERROR(checkPeerRecords(records, rank));
  // Round 2: whether every rank mapped every peer.
  std::vector<PeerOpenResult> opens(static_cast<size_t>(nranks));
  const Status opened = regions->openPeers(records);
  if (!opened.isOk()) {
    opens[size_t(rank)].failed = 1;
    setPeerError(opens[size_t(rank)].error, opened.message());
  }
  BRAID_RETURN_IF_ERROR(allGather(opens.data(), sizeof(PeerOpenResult)));
  BRAID_RETURN_IF_ERROR(checkPeerOpens(opens));
  return regions;
}

Status IpcRegions::allocate(PeerRecord* record) {
  DeviceScope scope(device_);
  // Its own allocation: an IPC handle exports a whole cudaMalloc allocation, and peers
  // must be able to reach this one and nothing else.
  BRAID_CUDA_RETURN(cudaMalloc(reinterpret_cast<void**>(&region_), layout_.bytes()));
  // Zeroed before any peer sees it, on a private stream: the legacy default stream would
  // wait for the application's kernels.
  cudaStream_t zeroing = nullptr;
  BRAID_CUDA_RETURN(cudaStreamCreateWithFlags(&zeroing, cudaStreamNonBlocking));
  cudaError_t e = cudaMemsetAsync(region_, 0, layout_.bytes(), zeroing);
  if (e == cudaSuccess) e = cudaStreamSynchronize(zeroing);
  cudaStreamDestroy(zeroing);
  BRAID_RETURN_IF_ERROR(cudaStatus(e, "zeroing the cuda_p2p receive region"));
  cudaIpcMemHandle_t handle;
  BRAID_CUDA_RETURN(cudaIpcGetMemHandle(&handle, region_));
  std::memcpy(record->ipcHandle, &handle, sizeof(handle));
  BRAID_CUDA_RETURN(cudaDeviceGetPCIBusId(record->busId, int(sizeof(record->busId)), device_));
  record->regionAddress = reinterpret_cast<uintptr_t>(region_);
  record->regionBytes = layout_.bytes();
  return Status::ok();
}

Status IpcRegions::enablePeerAccess(const char* peerBusId, int peer) {
  int peerDevice = -1;
  if (cudaDeviceGetByPCIBusId(&peerDevice, peerBusId) != cudaSuccess) {
    // Not visible here (CUDA_VISIBLE_DEVICES): cudaIpcOpenMemHandle's lazy peer access
    // below is the only way to reach it, and its failure names the problem.
    cudaGetLastError();
    return Status::ok();
  }
  if (peerDevice == device_) return Status::ok();  // the same GPU: IPC needs no peer access
  int canAccess = 0;
  BRAID_CUDA_RETURN(cudaDeviceCanAccessPeer(&canAccess, device_, peerDevice));
  if (canAccess == 0) {
    return invalidUsage("device group: rank " + std::to_string(rank_) + "'s GPU cannot access " +
                        "rank " + std::to_string(peer) + "'s GPU (" + peerBusId +
                        ") directly (no NVLink or PCIe peer path); cuda_p2p needs one");
  }
  const cudaError_t enabled = cudaDeviceEnablePeerAccess(peerDevice, 0);
  if (enabled == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();  // enabled by an earlier group or by the application: fine
    return Status::ok();
  }
  return cudaStatus(enabled, "cudaDeviceEnablePeerAccess");
}

Status IpcRegions::openPeers(const std::vector<PeerRecord>& records) {
  DeviceScope scope(device_);
  bases_.assign(size_t(nranks_), region_);
  for (int p = 0; p < nranks_; ++p) {
    if (p == rank_) continue;
    const PeerRecord& peer = records[size_t(p)];
    char busId[sizeof(peer.busId) + 1] = {};
    std::memcpy(busId, peer.busId, sizeof(peer.busId));
    BRAID_RETURN_IF_ERROR(enablePeerAccess(busId, p));
    if (peer.processToken == records[size_t(rank_)].processToken) {
      // A rank on another thread of this process: CUDA refuses to open a handle where it
      // was exported, and the pointer is valid here (peer access enabled above if needed).
      bases_[size_t(p)] = reinterpret_cast<uint8_t*>(uintptr_t(peer.regionAddress));
      continue;
    }
    cudaIpcMemHandle_t handle;
    std::memcpy(&handle, peer.ipcHandle, sizeof(handle));
    void* base = nullptr;
    const cudaError_t err = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
    if (err != cudaSuccess) {
      cudaGetLastError();
      return internalError("device group: rank " + std::to_string(rank_) + " cannot open rank " +
                           std::to_string(p) + "'s FIFOs (GPU " + busId +
                           "): cudaIpcOpenMemHandle: " + cudaGetErrorString(err));
    }
    opened_.push_back(base);
    bases_[size_t(p)] = static_cast<uint8_t*>(base);
  }
  return Status::ok();
}

IpcRegions::~IpcRegions() {
  DeviceScope scope(device_);
  for (void* p : opened_) cudaIpcCloseMemHandle(p);
  if (region_ != nullptr) cudaFree(region_);
}

}  // namespace braid::transport::cuda_p2p
