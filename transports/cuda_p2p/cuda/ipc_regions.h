// The cuda_p2p transport: the receive regions of a group whose ranks are in different
// processes of one node (one rank per process, each on its GPU, or all on one GPU, which
// CUDA IPC allows), each rank's mapped by every other.
//
// Creation is collective over the ranks (peer_exchange.h): each rank allocates its receive
// region in its own device memory (peer_region.h), zeroes it and exports it with
// cudaIpcGetMemHandle; the ranks swap handles through the communicator's bootstrap
// allgather; each then opens its peers' regions (cudaIpcOpenMemHandle; ranks of one process
// use the pointer itself) after enabling peer access where cudaDeviceCanAccessPeer allows.
// A rank whose device cannot reach a peer's fails creation, and so does every other rank:
// the verdict is taken from the same exchanged records everywhere, so no rank is left
// waiting for a peer that gave up. What runs over the regions (the FIFOs' ends, the kernels)
// is the device executor's: collectives/device/cuda/ipc_group.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/status.h"
#include "transports/cuda_p2p/peer_exchange.h"
#include "transports/cuda_p2p/peer_region.h"

namespace braid::transport::cuda_p2p {

/// The communicator's bootstrap allgather: in, this rank's `bytes` at data + rank * bytes;
/// out, every rank's.
using PeerAllGather = std::function<Status(void* data, size_t bytes)>;

class IpcRegions {
 public:
  /// Collective: every rank of the group calls it, with its region on CUDA `device`.
  /// `local` is the caller's own set-up before the exchange: when it failed, this rank
  /// allocates nothing and tells its peers, so every rank fails alike.
  static Result<std::unique_ptr<IpcRegions>> create(int rank, int nranks, int device,
                                                    const PeerFifoConfig& fifos,
                                                    const Status& local,
                                                    const PeerAllGather& allGather);
  /// Closes the peers' regions and frees this rank's. The caller has made sure no kernel
  /// uses them any more.
  ~IpcRegions();
  IpcRegions(const IpcRegions&) = delete;
  IpcRegions& operator=(const IpcRegions&) = delete;

  const PeerRegionLayout& layout() const { return layout_; }
  /// Every rank's region as this process addresses it: its own pointer, or a peer's opened
  /// handle.
  const std::vector<uint8_t*>& bases() const { return bases_; }

 private:
  IpcRegions(int rank, int nranks, int device, const PeerFifoConfig& fifos)
      : rank_(rank), nranks_(nranks), device_(device), layout_(fifos, nranks) {}
  Status allocate(PeerRecord* record);
  Status openPeers(const std::vector<PeerRecord>& records);
  Status enablePeerAccess(const char* peerBusId, int peer);

  const int rank_, nranks_, device_;
  const PeerRegionLayout layout_;
  uint8_t* region_ = nullptr;    // this rank's receive FIFOs (device memory)
  std::vector<uint8_t*> bases_;  // every rank's region as this process addresses it
  std::vector<void*> opened_;    // peers' regions opened by IPC (closed on destruction)
};

}  // namespace braid::transport::cuda_p2p
