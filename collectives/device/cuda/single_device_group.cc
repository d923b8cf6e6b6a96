// SingleDeviceGroup (see the header): FIFO allocation, per-call plans for all ranks at once
// (so protocol and channel count agree on both ends of every FIFO), and the launch.
#include "collectives/device/cuda/single_device_group.h"

#include <cuda_runtime.h>

#include <cstring>

#include "collectives/device/group_plans.h"
#include "transports/cuda_p2p/cuda/cuda_support.h"

namespace braid::device {

Result<std::shared_ptr<SingleDeviceGroup>> SingleDeviceGroup::create(
    int nranks, int device, const DeviceGroupOptions& options) {
  if (nranks < 1) return invalidArgument("device group: nranks must be positive");
  if (options.channels < 1 || options.simpleSlotBytes % 16 != 0 || options.llSlotBytes % 16 != 0 ||
      options.simpleSlots < 1 || options.llSlots < 1) {
    return invalidArgument(
        "device group: channels and slots must be positive, slot sizes "
        "multiples of 16 bytes");
  }
  int count = 0;
  BRAID_CUDA_RETURN(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count) {
    return invalidArgument("device group: CUDA device " + std::to_string(device) +
                           " does not exist (" + std::to_string(count) + " devices)");
  }
  DeviceScope scope(device);
  std::shared_ptr<SingleDeviceGroup> group(new SingleDeviceGroup(nranks, device, options));
  BRAID_CUDA_RETURN(cudaStreamCreateWithFlags(&group->uploads_, cudaStreamNonBlocking));
  BRAID_RETURN_IF_ERROR(group->allocate<SimpleProtocol>(&group->simple_, options.simpleSlots,
                                                        options.simpleSlotBytes));
  BRAID_RETURN_IF_ERROR(
      group->allocate<LlProtocol>(&group->ll_, options.llSlots, options.llSlotBytes));
  BRAID_CUDA_RETURN(cudaHostAlloc(reinterpret_cast<void**>(&group->status_),
                                  sizeof(int) * size_t(nranks), cudaHostAllocMapped));
  std::memset(group->status_, 0, sizeof(int) * size_t(nranks));
  return group;
}

template <class Proto>
Status SingleDeviceGroup::allocate(Fifos* fifos, uint32_t slots, uint32_t slotBytes) {
  const size_t n = size_t(nranks_), channels = size_t(options_.channels);
  const size_t count = channels * n * n;  // FIFOs [channel][from][to]
  BRAID_CUDA_RETURN(
      cudaMalloc(reinterpret_cast<void**>(&fifos->counters), count * sizeof(FifoCounters)));
  track(fifos->counters);
  const size_t perFifo = fifoSlotBytes(slots, slotBytes);
  BRAID_CUDA_RETURN(cudaMalloc(reinterpret_cast<void**>(&fifos->slots), count * perFifo));
  track(fifos->slots);
  BRAID_CUDA_RETURN(cudaMemsetAsync(fifos->counters, 0, count * sizeof(FifoCounters), uploads_));
  BRAID_CUDA_RETURN(cudaMemsetAsync(fifos->slots, 0, count * perFifo, uploads_));
  BRAID_CUDA_RETURN(cudaStreamSynchronize(uploads_));
  auto fifo = [&](size_t from, size_t to, size_t ch) {
    const size_t f = (ch * n + from) * n + to;
    return FifoMemory{fifos->counters + f, fifos->slots + f * perFifo, slots, slotBytes};
  };
  for (size_t r = 0; r < n; ++r) {
    std::vector<typename Proto::SendEnd> sends;
    std::vector<typename Proto::RecvEnd> recvs;
    for (size_t c = 0; c < channels; ++c) {
      for (size_t p = 0; p < n; ++p) {
        sends.emplace_back(fifo(r, p, c));
        recvs.emplace_back(fifo(p, r, c));
      }
    }
    BRAID_ASSIGN_OR_RETURN(auto* s, uploadVector(sends, uploads_, &owned_));
    BRAID_ASSIGN_OR_RETURN(auto* v, uploadVector(recvs, uploads_, &owned_));
    fifos->sendEnds.push_back(s);
    fifos->recvEnds.push_back(v);
  }
  return Status::ok();
}

SingleDeviceGroup::~SingleDeviceGroup() {
  DeviceScope scope(device_);
  cudaDeviceSynchronize();  // launches may still use the FIFOs
  for (void* p : owned_) cudaFree(p);
  if (status_ != nullptr) cudaFreeHost(status_);
  if (uploads_ != nullptr) cudaStreamDestroy(uploads_);
}

Result<const SingleDeviceGroup::CallPlan*> SingleDeviceGroup::planFor(const coll::CollArgs& args) {
  const std::string key = groupCallKey(args);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = plans_.find(key);
  if (it != plans_.end()) return &it->second;
  BRAID_ASSIGN_OR_RETURN(GroupPlans group,
                         planGroupCall(args, options_.channels, options_.overrides));
  CallPlan call;
  for (int r = 0; r < nranks_; ++r) {
    const DevicePlan& plan = group.ranks[size_t(r)];
    RankPlan rp;
    BRAID_ASSIGN_OR_RETURN(rp.ops, uploadVector(plan.ops, uploads_, &owned_));
    BRAID_ASSIGN_OR_RETURN(rp.stepStarts, uploadVector(plan.stepStarts, uploads_, &owned_));
    rp.stepCount = uint32_t(plan.stepStarts.size() - 1);
    if (group.scratchBytes[size_t(r)] > 0) {
      void* scratch = nullptr;
      BRAID_CUDA_RETURN(cudaMalloc(&scratch, group.scratchBytes[size_t(r)]));
      rp.scratch = static_cast<uint8_t*>(track(scratch));
    }
    call.ranks.push_back(rp);
  }
  call.channels = group.channels;
  call.protocol = group.protocol;
  return &plans_.emplace(key, std::move(call)).first->second;
}

Status SingleDeviceGroup::enqueue(const coll::CollArgs& args, const void* send, void* recv,
                                  void* stream) {
  if (args.rank < 0 || args.rank >= nranks_ || args.nranks != nranks_) {
    return invalidArgument("device group: rank " + std::to_string(args.rank) + " of " +
                           std::to_string(args.nranks) + " does not belong to this group of " +
                           std::to_string(nranks_));
  }
  if (args.kind == coll::CollKind::kAllToAllv) {
    return invalidUsage("device group: all-to-allv is not on the device path yet");
  }
  BRAID_RETURN_IF_ERROR(check(args.rank));
  DeviceScope scope(device_);
  BRAID_ASSIGN_OR_RETURN(const CallPlan* call, planFor(args));
  const RankPlan& rp = call->ranks[size_t(args.rank)];
  const Fifos& fifos = call->protocol == Protocol::kLl ? ll_ : simple_;
  LaunchConfig config;
  config.rankCount = 1;
  config.channels = call->channels;
  config.threadsPerBlock = options_.threadsPerBlock;
  config.type = args.type;
  config.protocol = call->protocol;
  int* status = nullptr;
  BRAID_CUDA_RETURN(
      cudaHostGetDevicePointer(reinterpret_cast<void**>(&status), status_ + args.rank, 0));
  config.status = status;
  config.stream = stream;
  ExecArgs& e = config.single.exec;
  e.plan = PlanView{rp.ops, rp.stepStarts, rp.stepCount};
  e.send = static_cast<const uint8_t*>(send);
  e.recv = static_cast<uint8_t*>(recv);
  e.scratch = rp.scratch;
  e.op = args.op;
  e.nranks = nranks_;
  e.channels = call->channels;
  e.spinLimit = options_.spinLimit;
  config.single.sendEnds = fifos.sendEnds[size_t(args.rank)];
  config.single.recvEnds = fifos.recvEnds[size_t(args.rank)];
  return cudaStatus(cudaError_t(launchPlanKernel(config)), "launching the collective kernel");
}

Status SingleDeviceGroup::check(int rank) const {
  if (rank < 0 || rank >= nranks_)
    return invalidArgument("device group: no rank " + std::to_string(rank));
  const int code = reinterpret_cast<volatile int*>(status_)[rank];
  if (code == kExecOk) return Status::ok();
  return internalError("rank " + std::to_string(rank) +
                       (code == kExecStalled
                            ? ": a collective kernel stalled waiting for a peer (are the ranks' "
                              "kernels on one stream, or did a peer not make the same call?)"
                            : ": a collective kernel was given a plan it cannot run"));
}

}  // namespace braid::device
