/*
 * BraidBackend: a c10d::Backend that runs PyTorch's collectives on a braid
 * communicator (include/braid.h), so that
 *     import braid.torch; dist.init_process_group(backend="braid")
 * works wherever gloo does.
 *
 * Lifecycle: create() rendezvouses through the c10d Store it is given (rank 0
 * calls braidGetUniqueId and store-sets the id, the others get it), which is
 * what makes env://, tcp://, file:// and torchrun work unchanged. Sub-groups
 * come from braidCommSplit (split(), and new_group when the default group is
 * bound to a device) or from a fresh rendezvous on the sub-group's store.
 *
 * Every operation becomes a Job (work.h) run by this backend's worker thread in
 * issue order; the returned Work's future completes with the output tensors.
 * CUDA tensors are stream-ordered like ProcessGroupNCCL's: the Job remembers the
 * caller's current stream, the worker enqueues the braid call there (braid's
 * device path returns at once), and the future records an event after it.
 * Between startCoalescing and endCoalescing, Jobs are merged into one braid
 * group, which is what batch_isend_irecv and the coalescing manager need.
 *
 * Threading: the c10d entry points may be called from any thread but are
 * expected in one global order, as with every c10d backend; the communicator
 * is used only by the worker thread after construction.
 */
#ifndef BRAID_BINDINGS_PYTHON_BACKEND_H_
#define BRAID_BINDINGS_PYTHON_BACKEND_H_

#include <braid.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "work.h"

namespace braid::torch_backend {

class BraidBackend : public c10d::Backend {
 public:
  /// Joins a new communicator of `size` ranks through `store` (collective over the group).
  static c10::intrusive_ptr<BraidBackend> create(const c10::intrusive_ptr<c10d::Store>& store,
                                                 int rank, int size,
                                                 std::chrono::milliseconds timeout);

  /// Takes ownership of `comm`, a communicator this process has joined.
  BraidBackend(braidComm_t comm, int rank, int size, std::chrono::milliseconds timeout);
  /// Runs the Jobs still queued, then releases the communicator.
  ~BraidBackend() override;
  /// The same, early (destroy_process_group); later operations fail with a clear error.
  void shutdown() override;

  const std::string getBackendName() const override { return "braid"; }
  c10::intrusive_ptr<Options> getBackendOptions() override;
  bool supportsSplitting() const override { return true; }
  bool supportsCoalescing() const override { return true; }
  uint64_t getSequenceNumberForGroup() override { return sequence_; }

  /// braidCommSplit of this communicator, in issue order (collective over its ranks).
  /// `color` BRAID_SPLIT_NOCOLOR returns nullptr; others get the new group's backend.
  c10::intrusive_ptr<BraidBackend> splitByColor(int color, int key);
  /// dist.split_group: ranks (of this group) listed in `ranks` form one new group.
  c10::intrusive_ptr<c10d::Backend> split(const c10::intrusive_ptr<c10d::Store>& store,
                                          const std::vector<int>& ranks,
                                          const c10::intrusive_ptr<Options>& opts) override;

  void startCoalescing() override;
  c10::intrusive_ptr<c10d::Work> endCoalescing() override;

  // ---- Collectives (collectives.cc) ----
  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplits,
                                               std::vector<int64_t>& inputSplits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

 private:
  /// Queues `job` (or adds it to the coalesced batch) and returns its Work. A CUDA `place`
  /// (the operation's first tensor) binds the Job to that device's current stream.
  c10::intrusive_ptr<c10d::Work> submit(c10d::OpType type, Job job, std::vector<at::Tensor> outputs,
                                        const at::Tensor& place = at::Tensor());
  /// Runs one Job on the worker thread; throws DistBackendError naming the rank.
  void runJob(Job& job);
  /// Runs `call` on the worker thread after everything queued before it, and waits.
  void runAndWait(const char* name, BraidCall call);
  /// "rank 1 of 4", for messages.
  std::string where() const;

  braidComm_t comm_;  // owned; used only by the worker thread once queue_ runs
  const std::chrono::milliseconds timeout_;
  std::atomic<uint64_t> sequence_{0};  // operations issued, for desync diagnostics

  std::mutex coalesceMu_;  // guards coalescing_ and coalesced_
  bool coalescing_ = false;
  Job coalesced_;

  std::unique_ptr<JobQueue> queue_;  // last: its thread uses the members above
};

}  // namespace braid::torch_backend

#endif  // BRAID_BINDINGS_PYTHON_BACKEND_H_
