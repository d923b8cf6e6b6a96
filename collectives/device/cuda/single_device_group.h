// Several ranks of one process on one GPU (braidCommInitAll with every rank on the same
// device): the first device path the C API will route device buffers to.
//
// The group owns, in device memory, one FIFO per (sender, receiver, channel) for each
// protocol — no IPC is needed, every rank's kernel reaches every FIFO — and each rank's
// FIFO ends. A call enqueues that rank's part of a collective as one kernel launch on the
// caller's stream and returns; ranks' kernels meet through the FIFOs, so they must be able
// to run at the same time: give each rank its own stream (a kernel queued behind another
// rank's on one stream waits forever for it; the executor then reports a stall instead of
// hanging, through check()).
//
// Plans are built once per distinct call for all ranks together (they are all in this
// process), so choices that both ends of a FIFO must share — channel count and protocol —
// are made from every rank's plan, never from one rank's view.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collectives/device/launch.h"
#include "collectives/schedule.h"
#include "collectives/select.h"
#include "core/status.h"

struct CUstream_st;  // cudaStream_t's pointee, so this header needs no CUDA headers

namespace braid::device {

struct DeviceGroupOptions {
  int channels = 2;  // thread blocks per rank when the plan splits
  int threadsPerBlock = 256;
  uint32_t simpleSlots = 8;
  uint32_t simpleSlotBytes = 64 << 10;  // 512 KiB per Simple FIFO
  uint32_t llSlots = 8;
  uint32_t llSlotBytes = 4 << 10;  // 2 KiB payload per LL slot
  coll::Overrides overrides;       // BRAID_ALGO / BRAID_PROTO (collectives/select.h)
  // Idle polls (~64-128 ns naps) in one step before a stall is reported: about a minute, so
  // ranks whose host threads reach a collective seconds apart still meet. Tests lower it.
  uint64_t spinLimit = uint64_t(1) << 30;
};

class SingleDeviceGroup {
 public:
  /// Allocates the FIFOs of `nranks` ranks on CUDA device `device`.
  static Result<std::shared_ptr<SingleDeviceGroup>> create(int nranks, int device,
                                                           const DeviceGroupOptions& options);
  ~SingleDeviceGroup();
  SingleDeviceGroup(const SingleDeviceGroup&) = delete;
  SingleDeviceGroup& operator=(const SingleDeviceGroup&) = delete;

  int nranks() const { return nranks_; }
  int device() const { return device_; }

  /// Enqueues args.rank's part of the collective on `stream` (a cudaStream_t; null is the
  /// legacy default stream, which serialises ranks: see the file comment). `send`/`recv`
  /// are device memory of the sizes coll::sendBufferBytes / recvBufferBytes give.
  Status enqueue(const coll::CollArgs& args, const void* send, void* recv, void* stream);

  /// A stall or bad plan reported by a finished launch of `rank` (sticky), else ok.
  Status check(int rank) const;

 private:
  struct Fifos {
    FifoCounters* counters = nullptr;
    uint8_t* slots = nullptr;
    std::vector<void*> sendEnds, recvEnds;  // per rank: [channels][nranks] ends, device memory
  };
  struct RankPlan {
    PlanOp* ops = nullptr;
    uint32_t* stepStarts = nullptr;
    uint32_t stepCount = 0;
    uint8_t* scratch = nullptr;
  };
  struct CallPlan {
    std::vector<RankPlan> ranks;
    int channels = 1;
    Protocol protocol = Protocol::kSimple;
  };

  SingleDeviceGroup(int nranks, int device, const DeviceGroupOptions& options)
      : nranks_(nranks), device_(device), options_(options) {}
  template <class Proto>
  Status allocate(Fifos* fifos, uint32_t slots, uint32_t slotBytes);
  Result<const CallPlan*> planFor(const coll::CollArgs& args);
  void* track(void* p) {
    owned_.push_back(p);
    return p;
  }

  const int nranks_;
  const int device_;
  const DeviceGroupOptions options_;
  Fifos simple_, ll_;
  int* status_ = nullptr;           // mapped pinned host memory, one word per rank
  CUstream_st* uploads_ = nullptr;  // cudaStream_t for plan uploads (see upload() in the .cc)
  std::vector<void*> owned_;        // device allocations, freed on destruction
  std::mutex mu_;                   // guards plans_ (ranks may call from several threads)
  std::map<std::string, CallPlan> plans_;
};

}  // namespace braid::device
