// One rank of a device group whose ranks are in different processes of one node, over the
// cuda_p2p transport (a communicator made with braidCommInitRank or braidCommInitFromEnv,
// one rank per process, each on its GPU — or all on the same GPU, which CUDA IPC allows).
//
// Creation is collective over the ranks: the transport (transports/cuda_p2p/cuda/
// ipc_regions.h) gives every rank its peers' receive regions, or every rank the same error;
// this group wires its FIFO ends over them (peer_ends.h), plans calls and launches them.
//
// Ordering across processes and GPUs: the protocols publish with a system-scope fence
// (__threadfence_system, memory_order.h) before the tail/head store and read flags and LL
// words with volatile (uncached) loads. A peer on another GPU is outside the "gpu" scope, so
// device scope would not order a sender's slot writes before its tail as the receiver's
// GPU sees them; system scope does, for a peer on the same GPU too (where it costs little:
// one fence per slot).
//
// Calls enqueue the rank's kernel on the caller's stream and return, as SingleDeviceGroup.
// A peer that dies or makes a different call leaves this rank's kernel waiting; the
// executor's spin budget ends the wait and check() reports it on the next call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collectives/device/launch.h"
#include "collectives/device/peer_ends.h"
#include "collectives/schedule.h"
#include "collectives/select.h"
#include "core/status.h"
#include "transports/cuda_p2p/cuda/ipc_regions.h"

struct CUstream_st;

namespace braid::device {

struct PeerGroupOptions {
  PeerFifoConfig fifos;
  int threadsPerBlock = 256;
  coll::Overrides overrides;  // BRAID_ALGO / BRAID_PROTO (collectives/select.h)
  // Idle polls per step before a stall is reported (about a minute; see DeviceGroupOptions).
  uint64_t spinLimit = uint64_t(1) << 30;
};

using transport::cuda_p2p::PeerAllGather;

class IpcDeviceGroup {
 public:
  /// Collective: every rank of the communicator calls it (its FIFOs on CUDA `device`).
  static Result<std::shared_ptr<IpcDeviceGroup>> create(int rank, int nranks, int device,
                                                        const PeerGroupOptions& options,
                                                        const PeerAllGather& allGather);
  ~IpcDeviceGroup();
  IpcDeviceGroup(const IpcDeviceGroup&) = delete;
  IpcDeviceGroup& operator=(const IpcDeviceGroup&) = delete;

  int rank() const { return rank_; }
  int device() const { return device_; }

  /// Enqueues this rank's part (args.rank must be rank()) on `stream` (a cudaStream_t).
  Status enqueue(const coll::CollArgs& args, const void* send, void* recv, void* stream);

  /// A stall or bad plan reported by a finished launch (sticky), else ok.
  Status check() const;

 private:
  struct CallPlan {
    PlanView plan;
    uint8_t* scratch = nullptr;
    int channels = 1;
    Protocol protocol = Protocol::kSimple;
  };

  IpcDeviceGroup(int rank, int nranks, int device, const PeerGroupOptions& options)
      : rank_(rank), nranks_(nranks), device_(device), options_(options) {}
  // What this rank needs besides the regions: its upload stream and status word.
  Status setUp();
  Status wireEnds();
  Result<const CallPlan*> planFor(const coll::CollArgs& args);

  const int rank_, nranks_, device_;
  const PeerGroupOptions options_;
  std::unique_ptr<transport::cuda_p2p::IpcRegions> regions_;  // every rank's receive FIFOs
  void* simpleEnds_[2] = {};  // device arrays [channels][nranks]: send, recv ends
  void* llEnds_[2] = {};
  int* status_ = nullptr;  // mapped pinned host word
  CUstream_st* uploads_ =
      nullptr;  // private stream for uploads (transports/cuda_p2p/cuda/cuda_support.h)
  std::vector<void*> owned_;  // device allocations, freed on destruction
  std::mutex mu_;             // guards plans_
  std::map<std::string, CallPlan> plans_;
};

}  // namespace braid::device
