// IpcDeviceGroup (see the header): its set-up around the transport's regions, wiring this
// rank's ends, per-call plans and the launch.
#include "collectives/device/cuda/ipc_group.h"

#include <cuda_runtime.h>

#include "collectives/device/group_plans.h"
#include "transports/cuda_p2p/cuda/cuda_support.h"

namespace braid::device {

Result<std::shared_ptr<IpcDeviceGroup>> IpcDeviceGroup::create(int rank, int nranks, int device,
                                                               const PeerGroupOptions& options,
                                                               const PeerAllGather& allGather) {
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return invalidArgument("device group: rank " + std::to_string(rank) + " of " +
                           std::to_string(nranks) + " is out of range");
  }
  const PeerFifoConfig& f = options.fifos;
  if (f.channels < 1 || f.simpleSlots < 1 || f.llSlots < 1 || f.simpleSlotBytes % 16 != 0 ||
      f.llSlotBytes % 16 != 0 || f.simpleSlotBytes == 0 || f.llSlotBytes == 0) {
    return invalidArgument(
        "device group: channels and slots must be positive, slot sizes positive multiples of "
        "16 bytes");
  }
  std::shared_ptr<IpcDeviceGroup> group(new IpcDeviceGroup(rank, nranks, device, options));
  // A failed set-up still takes part in the exchange, so no peer waits for this rank.
  const Status local = group->setUp();
  BRAID_ASSIGN_OR_RETURN(group->regions_, transport::cuda_p2p::IpcRegions::create(
                                              rank, nranks, device, f, local, allGather));
  BRAID_RETURN_IF_ERROR(group->wireEnds());
  return group;
}

Status IpcDeviceGroup::setUp() {
  int count = 0;
  BRAID_CUDA_RETURN(cudaGetDeviceCount(&count));
  if (device_ < 0 || device_ >= count) {
    return invalidArgument("device group: CUDA device " + std::to_string(device_) +
                           " does not exist (" + std::to_string(count) + " devices)");
  }
  DeviceScope scope(device_);
  BRAID_CUDA_RETURN(cudaStreamCreateWithFlags(&uploads_, cudaStreamNonBlocking));
  BRAID_CUDA_RETURN(
      cudaHostAlloc(reinterpret_cast<void**>(&status_), sizeof(int), cudaHostAllocMapped));
  *status_ = kExecOk;
  return Status::ok();
}

Status IpcDeviceGroup::wireEnds() {
  DeviceScope scope(device_);
  const PeerRegionLayout& layout = regions_->layout();
  const std::vector<uint8_t*>& bases = regions_->bases();
  auto simple = wirePeerEnds<SimpleProtocol>(layout, Protocol::kSimple, bases, rank_);
  auto ll = wirePeerEnds<LlProtocol>(layout, Protocol::kLl, bases, rank_);
  auto* stream = static_cast<cudaStream_t>(uploads_);
  BRAID_ASSIGN_OR_RETURN(simpleEnds_[0], uploadVector(simple.sends, stream, &owned_));
  BRAID_ASSIGN_OR_RETURN(simpleEnds_[1], uploadVector(simple.recvs, stream, &owned_));
  BRAID_ASSIGN_OR_RETURN(llEnds_[0], uploadVector(ll.sends, stream, &owned_));
  BRAID_ASSIGN_OR_RETURN(llEnds_[1], uploadVector(ll.recvs, stream, &owned_));
  return Status::ok();
}

IpcDeviceGroup::~IpcDeviceGroup() {
  DeviceScope scope(device_);
  cudaDeviceSynchronize();  // this rank's launches may still use the FIFOs
  regions_.reset();
  for (void* p : owned_) cudaFree(p);
  if (status_ != nullptr) cudaFreeHost(status_);
  if (uploads_ != nullptr) cudaStreamDestroy(uploads_);
}

Result<const IpcDeviceGroup::CallPlan*> IpcDeviceGroup::planFor(const coll::CollArgs& args) {
  const std::string key = groupCallKey(args);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = plans_.find(key);
  if (it != plans_.end()) return &it->second;
  // Every rank's plan decides the channel count both ends of a FIFO use; only this rank's
  // is uploaded (the peers build the same ones in their processes).
  BRAID_ASSIGN_OR_RETURN(GroupPlans group,
                         planGroupCall(args, int(options_.fifos.channels), options_.overrides));
  const DevicePlan& plan = group.ranks[size_t(rank_)];
  auto* stream = static_cast<cudaStream_t>(uploads_);
  CallPlan call;
  BRAID_ASSIGN_OR_RETURN(PlanOp * ops, uploadVector(plan.ops, stream, &owned_));
  BRAID_ASSIGN_OR_RETURN(uint32_t * starts, uploadVector(plan.stepStarts, stream, &owned_));
  call.plan = PlanView{ops, starts, uint32_t(plan.stepStarts.size() - 1)};
  if (group.scratchBytes[size_t(rank_)] > 0) {
    void* scratch = nullptr;
    BRAID_CUDA_RETURN(cudaMalloc(&scratch, group.scratchBytes[size_t(rank_)]));
    owned_.push_back(scratch);
    call.scratch = static_cast<uint8_t*>(scratch);
  }
  call.channels = group.channels;
  call.protocol = group.protocol;
  return &plans_.emplace(key, call).first->second;
}

Status IpcDeviceGroup::enqueue(const coll::CollArgs& args, const void* send, void* recv,
                               void* stream) {
  if (args.rank != rank_ || args.nranks != nranks_) {
    return invalidArgument("device group: rank " + std::to_string(args.rank) + " of " +
                           std::to_string(args.nranks) + " is not this group's rank " +
                           std::to_string(rank_) + " of " + std::to_string(nranks_));
  }
  if (args.kind == coll::CollKind::kAllToAllv) {
    return invalidUsage("device group: all-to-allv is not on the device path yet");
  }
  BRAID_RETURN_IF_ERROR(check());
  DeviceScope scope(device_);
  BRAID_ASSIGN_OR_RETURN(const CallPlan* call, planFor(args));
  LaunchConfig config;
  config.rankCount = 1;
  config.channels = call->channels;
  config.threadsPerBlock = options_.threadsPerBlock;
  config.type = args.type;
  config.protocol = call->protocol;
  BRAID_CUDA_RETURN(cudaHostGetDevicePointer(reinterpret_cast<void**>(&config.status), status_, 0));
  config.stream = stream;
  ExecArgs& e = config.single.exec;
  e.plan = call->plan;
  e.send = static_cast<const uint8_t*>(send);
  e.recv = static_cast<uint8_t*>(recv);
  e.scratch = call->scratch;
  e.op = args.op;
  e.nranks = nranks_;
  e.channels = call->channels;
  e.spinLimit = options_.spinLimit;
  void* const* ends = call->protocol == Protocol::kLl ? llEnds_ : simpleEnds_;
  config.single.sendEnds = ends[0];
  config.single.recvEnds = ends[1];
  return cudaStatus(cudaError_t(launchPlanKernel(config)), "launching the collective kernel");
}

Status IpcDeviceGroup::check() const {
  const int code = *reinterpret_cast<volatile int*>(status_);
  if (code == kExecOk) return Status::ok();
  return internalError(
      "rank " + std::to_string(rank_) +
      (code == kExecStalled
           ? ": a collective kernel stalled waiting for a peer process (did a peer exit, fail, "
             "or make a different call?)"
           : ": a collective kernel was given a plan it cannot run"));
}

}  // namespace braid::device
