// SingleDeviceGroup (see the header): FIFO allocation, per-call plans for all ranks at once
// (so protocol and channel count agree on both ends of every FIFO), and the launch.
#include "collectives/device/cuda/single_device_group.h"

#include <cuda_runtime.h>

#include <cstring>

#include "collectives/algorithm.h"
#include "collectives/device/plan_builder.h"
#include "core/types.h"

namespace braid::device {
namespace {

Status cudaStatus(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::ok();
  return internalError(std::string("CUDA: ") + what + ": " + cudaGetErrorString(err));
}

#define BRAID_CUDA_RETURN(call) BRAID_RETURN_IF_ERROR(cudaStatus((call), #call))

// Makes `device` current for the scope and restores the caller's device after.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    cudaGetDevice(&previous_);
    if (previous_ != device) cudaSetDevice(device);
  }
  ~DeviceScope() { cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

// Copies `host` into new device memory through `stream`, a private non-blocking stream: a
// synchronous cudaMemcpy would run on the legacy default stream and wait for the caller's
// kernels of an earlier collective, which may be waiting for another rank's next call.
template <class T>
Result<T*> upload(const std::vector<T>& host, cudaStream_t stream, std::vector<void*>* owned) {
  void* p = nullptr;
  BRAID_CUDA_RETURN(cudaMalloc(&p, host.size() * sizeof(T) + 1));
  owned->push_back(p);
  if (!host.empty()) {
    BRAID_CUDA_RETURN(
        cudaMemcpyAsync(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
    BRAID_CUDA_RETURN(cudaStreamSynchronize(stream));
  }
  return static_cast<T*>(p);
}

// Everything a plan depends on, as a cache key.
std::string keyOf(const coll::CollArgs& a) {
  return std::to_string(int(a.kind)) + "/" + std::to_string(a.count) + "/" +
         std::to_string(int(a.type)) + "/" + std::to_string(int(a.op)) + "/" +
         std::to_string(a.root) + "/" + std::to_string(a.inPlace);
}

}  // namespace

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
    BRAID_ASSIGN_OR_RETURN(auto* s, upload(sends, uploads_, &owned_));
    BRAID_ASSIGN_OR_RETURN(auto* v, upload(recvs, uploads_, &owned_));
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
  const std::string key = keyOf(args);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = plans_.find(key);
  if (it != plans_.end()) return &it->second;
  CallPlan call;
  bool splittable = true;
  std::vector<DevicePlan> plans;
  for (int r = 0; r < nranks_; ++r) {
    coll::CollArgs a = args;
    a.rank = r;
    // One chunk per ring round: FIFO slots pipeline the transfer, and whole rounds let the
    // plan fuse each receive with the forward of the same bytes.
    a.chunkBytes = size_t(1) << 62;
    BRAID_ASSIGN_OR_RETURN(coll::Schedule schedule, coll::buildSchedule(a, ""));
    PlanBufferSizes sizes{coll::sendBufferBytes(a), coll::recvBufferBytes(a), schedule.scratchBytes,
                          args.inPlace};
    BRAID_ASSIGN_OR_RETURN(DevicePlan plan,
                           buildDevicePlan(schedule, sizes, typeSize(args.type), true));
    splittable &= plan.splittable;
    RankPlan rp;
    BRAID_ASSIGN_OR_RETURN(rp.ops, upload(plan.ops, uploads_, &owned_));
    BRAID_ASSIGN_OR_RETURN(rp.stepStarts, upload(plan.stepStarts, uploads_, &owned_));
    rp.stepCount = uint32_t(plan.stepStarts.size() - 1);
    if (schedule.scratchBytes > 0) {
      void* scratch = nullptr;
      BRAID_CUDA_RETURN(cudaMalloc(&scratch, schedule.scratchBytes));
      rp.scratch = static_cast<uint8_t*>(track(scratch));
    }
    call.ranks.push_back(rp);
  }
  call.channels = splittable ? options_.channels : 1;
  const size_t bytes = args.count * typeSize(args.type);
  call.protocol = bytes <= options_.llMaxBytes ? Protocol::kLl : Protocol::kSimple;
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
