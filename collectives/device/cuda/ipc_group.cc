// IpcDeviceGroup (see the header): the receive region and its export, the two exchange
// rounds, opening peers' regions, wiring this rank's ends, per-call plans and the launch.
#include "collectives/device/cuda/ipc_group.h"

#include <cuda_runtime.h>

#include <cstring>

#include "collectives/device/cuda/cuda_support.h"
#include "collectives/device/group_plans.h"
#include "collectives/device/peer_exchange.h"

namespace braid::device {

static_assert(sizeof(cudaIpcMemHandle_t) == kIpcHandleBytes, "IPC handle size changed");

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
  // Round 1: every rank sends a record, a failed one included, so nobody waits for it.
  std::vector<PeerRecord> records(static_cast<size_t>(nranks));
  PeerRecord& mine = records[size_t(rank)];
  mine.processToken = thisProcessToken();
  mine.config = f;
  const Status local = group->allocateRegion(&mine).withContext(
      "device group: rank " + std::to_string(rank) + " could not set up its device FIFOs");
  if (!local.isOk()) {
    mine.failed = 1;
    setPeerError(mine.error, local.message());
  }
  BRAID_RETURN_IF_ERROR(allGather(records.data(), sizeof(PeerRecord)));
  BRAID_RETURN_IF_ERROR(local);
  BRAID_RETURN_IF_ERROR(checkPeerRecords(records, rank));
  // Round 2: whether every rank mapped every peer.
  std::vector<PeerOpenResult> opens(static_cast<size_t>(nranks));
  Status opened = group->openPeers(records);
  if (!opened.isOk()) {
    opens[size_t(rank)].failed = 1;
    setPeerError(opens[size_t(rank)].error, opened.message());
  }
  BRAID_RETURN_IF_ERROR(allGather(opens.data(), sizeof(PeerOpenResult)));
  BRAID_RETURN_IF_ERROR(checkPeerOpens(opens));
  BRAID_RETURN_IF_ERROR(group->wireEnds());
  return group;
}

Status IpcDeviceGroup::allocateRegion(PeerRecord* record) {
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
  const PeerRegionLayout layout(options_.fifos, nranks_);
  // Its own allocation: an IPC handle exports a whole cudaMalloc allocation, and peers
  // must be able to reach this one and nothing else.
  BRAID_CUDA_RETURN(cudaMalloc(reinterpret_cast<void**>(&region_), layout.bytes()));
  owned_.push_back(region_);
  BRAID_CUDA_RETURN(cudaMemsetAsync(region_, 0, layout.bytes(), uploads_));
  BRAID_CUDA_RETURN(cudaStreamSynchronize(uploads_));  // zeroed before any peer sees it
  cudaIpcMemHandle_t handle;
  BRAID_CUDA_RETURN(cudaIpcGetMemHandle(&handle, region_));
  std::memcpy(record->ipcHandle, &handle, sizeof(handle));
  BRAID_CUDA_RETURN(cudaDeviceGetPCIBusId(record->busId, int(sizeof(record->busId)), device_));
  record->regionAddress = reinterpret_cast<uintptr_t>(region_);
  record->regionBytes = layout.bytes();
  return Status::ok();
}

Status IpcDeviceGroup::enablePeerAccess(const char* peerBusId, int peer) {
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

Status IpcDeviceGroup::openPeers(const std::vector<PeerRecord>& records) {
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

Status IpcDeviceGroup::wireEnds() {
  DeviceScope scope(device_);
  const PeerRegionLayout layout(options_.fifos, nranks_);
  auto simple = wirePeerEnds<SimpleProtocol>(layout, Protocol::kSimple, bases_, rank_);
  auto ll = wirePeerEnds<LlProtocol>(layout, Protocol::kLl, bases_, rank_);
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
  for (void* p : opened_) cudaIpcCloseMemHandle(p);
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
