// BraidWork and the per-backend worker thread; see work.h for why they exist.
#include "work.h"

#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>

namespace braid::torch_backend {

BraidWork::BraidWork(int rank, c10d::OpType type, std::string description,
                     std::vector<at::Tensor> outputs, std::optional<c10::Device> device)
    : c10d::Work(rank, type),
      description_(std::move(description)),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()),
          device ? std::vector<c10::Device>{*device} : std::vector<c10::Device>{})) {}

bool BraidWork::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (timeout == ::kNoTimeout) {
    cv_.wait(lock, [&] { return completed_; });
  } else if (!cv_.wait_for(lock, timeout, [&] { return completed_; })) {
    C10_THROW_ERROR(DistBackendError, "braid: " + description_ + " did not complete within " +
                                          std::to_string(timeout.count()) + " ms");
  }
  if (exception_) std::rethrow_exception(exception_);
  // CUDA: the caller's current stream waits for the event recorded after the operation.
  if (!future_->devices().empty()) future_->wait();
  return true;
}

std::vector<at::Tensor> BraidWork::result() { return outputs_; }

c10::intrusive_ptr<c10::ivalue::Future> BraidWork::getFuture() { return future_; }

void BraidWork::complete(std::exception_ptr error) {
  // The Work first, then the future: whoever the future wakes (DDP's callbacks run right
  // here, on the worker thread) then also sees is_completed() == true.
  finish(error);
  if (error) {
    future_->setError(error);
  } else {
    future_->markCompleted(c10::IValue(outputs_));
  }
}

void Job::absorb(Job&& other) {
  if (name.empty()) {
    name = other.name;
  } else if (name.find(other.name) == std::string::npos) {
    name += "+" + other.name;
  }
  for (auto& c : other.calls) calls.push_back(std::move(c));
  for (auto& b : other.before) before.push_back(std::move(b));
  for (auto& a : other.after) after.push_back(std::move(a));
  for (auto& w : other.works) works.push_back(std::move(w));
  if (!stream) stream = other.stream;
}

JobQueue::JobQueue(std::function<void(Job&)> run)
    : run_(std::move(run)), thread_([this] { loop(); }) {}

JobQueue::~JobQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void JobQueue::push(Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

Job JobQueue::popLocked() {
  Job job = std::move(jobs_.front());
  jobs_.pop_front();
  while (job.pointToPoint && !jobs_.empty() && jobs_.front().pointToPoint) {
    job.absorb(std::move(jobs_.front()));
    jobs_.pop_front();
  }
  return job;
}

void JobQueue::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stop_ and drained
      job = popLocked();
    }
    std::exception_ptr error;
    try {
      run_(job);
    } catch (...) {
      error = std::current_exception();
    }
    for (auto& work : job.works) work->complete(error);
  }
}

}  // namespace braid::torch_backend
