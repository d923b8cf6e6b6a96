/*
 * The asynchronous half of the braid c10d backend: the Work handed back to
 * PyTorch, the Job a collective becomes, and the one worker thread per
 * backend that runs Jobs in submission order.
 *
 * Why a worker thread: braid's host collectives complete before their call
 * returns, but c10d promises asynchronous Work (DDP overlaps backward with
 * gradient all-reduces). Running every Job of one backend on one thread keeps
 * the order in which the program issued them, which is the order every rank
 * must see; braid itself bounds every wait (BRAID_TIMEOUT), so a dead peer
 * becomes an error here, never a hang.
 *
 * A Job is a list of braid calls plus staging: `before` copies inputs that are
 * not contiguous (or are lists of tensors) into flat buffers, `after` copies
 * results back. More than one call runs inside braidGroupStart/End, which is
 * how coalescing, batch_isend_irecv and multi-tensor collectives are fused.
 */
#ifndef BRAID_BINDINGS_PYTHON_WORK_H_
#define BRAID_BINDINGS_PYTHON_WORK_H_

#include <braid.h>
#include <c10/core/Stream.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <vector>

namespace braid::torch_backend {

/// A c10d Work completed by the worker thread; its future carries the output tensors.
///
/// On CUDA tensors (`device` set) the Work completes once the worker has enqueued the
/// operation on the stream it was issued on; the future then records an event there, as
/// ProcessGroupNCCL's does, so wait() and the future's callbacks order the caller's current
/// stream after the operation instead of blocking the host until the GPU is done.
class BraidWork : public c10d::Work {
 public:
  BraidWork(int rank, c10d::OpType type, std::string description, std::vector<at::Tensor> outputs,
            std::optional<c10::Device> device = std::nullopt);

  /// Blocks until the Job ran (CUDA: was enqueued, then the current stream waits for it);
  /// throws the Job's error, or a timeout naming the rank.
  bool wait(std::chrono::milliseconds timeout = ::kNoTimeout) override;
  std::vector<at::Tensor> result() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  /// Marks the work done (error == nullptr) or failed; wakes waiters and the future.
  void complete(std::exception_ptr error);

 private:
  const std::string description_;  // "allreduce on rank 2 of 4", for messages
  const std::vector<at::Tensor> outputs_;
  const c10::intrusive_ptr<c10::ivalue::Future> future_;
};

/// One braid call on the backend's communicator; `stream` is the CUDA stream of a Job on CUDA
/// tensors, nullptr for host tensors (braid completes those before returning).
using BraidCall = std::function<braidResult_t(braidComm_t, braidStream_t)>;

/// What one c10d operation (or one coalesced batch of them) asks the worker to do.
struct Job {
  std::string name;                                  // c10d name of the operation, e.g. "allreduce"
  std::vector<BraidCall> calls;                      // fused in one braid group when more than one
  std::vector<std::function<void()>> before;         // staging copies into flat buffers
  std::vector<std::function<void()>> after;          // copies from staging buffers to outputs
  std::vector<c10::intrusive_ptr<BraidWork>> works;  // completed when the Job finishes
  bool pointToPoint = false;                         // consecutive p2p Jobs are fused by the worker
  // CUDA tensors: the caller's current stream when the operation was issued. The worker runs
  // the staging copies and the braid calls on it, so they follow what the caller enqueued
  // before (the tensors' producers) in stream order.
  std::optional<c10::Stream> stream;

  /// Appends `other` to this Job (coalescing): its calls, staging and works.
  void absorb(Job&& other);
};

/// Runs Jobs on one thread, in order. `run` throws on failure.
class JobQueue {
 public:
  explicit JobQueue(std::function<void(Job&)> run);
  /// Runs what is queued, then stops the thread.
  ~JobQueue();
  JobQueue(const JobQueue&) = delete;
  JobQueue& operator=(const JobQueue&) = delete;

  void push(Job job);

 private:
  void loop();
  /// Pops the next Job; a p2p Job absorbs the p2p Jobs queued right behind it, so that an
  /// isend and an irecv issued back to back run in one braid group and cannot deadlock.
  Job popLocked();

  const std::function<void(Job&)> run_;
  std::mutex mu_;  // guards jobs_ and stop_
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stop_ = false;
  std::thread thread_;  // last member: starts after the others exist
};

}  // namespace braid::torch_backend

#endif  // BRAID_BINDINGS_PYTHON_WORK_H_
