/*
 * Bucketed, overlapped gradient exchange (see gradient_sync.h).
 */
#include "train/gradient_sync.h"

#include "train/clock.h"

namespace braid::train {

GradientSync::GradientSync(braidComm_t dp, int dpSize, StageModel* model, const SyncConfig& config)
    : dp_(dp), dpSize_(dpSize), model_(model), config_(config) {
  // Layers are laid out last-first, so walk from the last layer down.
  bucketOfLayer_.assign(model->layerCount(), -1);
  const size_t bucketFloats = std::max<size_t>(1, config.bucketBytes / sizeof(float));
  Range open{model->layerSlice(model->layerCount() - 1).begin, 0};
  for (int layer = model->layerCount() - 1; layer >= 0; --layer) {
    open.end = model->layerSlice(layer).end;
    if (static_cast<size_t>(open.size()) >= bucketFloats || layer == 0) {
      bucketOfLayer_[layer] = static_cast<int>(buckets_.size());
      buckets_.push_back({open, layer, {}});
      open = {open.end, 0};
    }
  }
  if (config_.precision != Precision::kFp32) {
    for (auto& bucket : buckets_) bucket.half.resize(bucket.slice.size());
  }
  if (dpSize_ > 1 && config_.overlap) thread_ = std::thread([this] { commLoop(); });
}

GradientSync::~GradientSync() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
}

void GradientSync::beginStep() {
  std::lock_guard<std::mutex> lock(mutex_);
  completed_ = 0;
  busySeconds_ = 0;
}

void GradientSync::layerDone(int layer) {
  int bucket = bucketOfLayer_[layer];
  if (bucket < 0 || !thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(bucket);
  }
  changed_.notify_all();
}

Status GradientSync::exchange(Bucket& bucket) {
  float* grads = model_->grads().data() + bucket.slice.begin;
  const size_t count = bucket.slice.size();
  const bool half = config_.precision != Precision::kFp32;
  if (half) toHalf(config_.precision, grads, count, bucket.half.data());
  if (dpSize_ > 1) {
    void* data = half ? static_cast<void*>(bucket.half.data()) : static_cast<void*>(grads);
    braidDataType_t type = !half                                   ? braidFloat32
                           : config_.precision == Precision::kBf16 ? braidBfloat16
                                                                   : braidFloat16;
    braidResult_t result =
        config_.mode == DpMode::kRing
            ? braidAllReduce(data, data, count, type, braidSum, dp_, nullptr)
            : braidReduce(data, data, count, type, braidSum, /*root=*/0, dp_, nullptr);
    TRAIN_RETURN_IF_ERROR(checkBraid(result, dp_,
                                     config_.mode == DpMode::kRing
                                         ? "data-parallel all-reduce of a gradient bucket"
                                         : "parameter-server reduce of a gradient bucket"));
  }
  if (half) fromHalf(config_.precision, bucket.half.data(), count, grads);
  return Status();
}

void GradientSync::commLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    int index = queue_.front();
    queue_.pop_front();
    lock.unlock();
    double start = nowSeconds();
    Status status = exchange(buckets_[index]);
    double spent = nowSeconds() - start;
    lock.lock();
    busySeconds_ += spent;
    if (!status.ok() && error_.ok()) error_ = status;
    ++completed_;
    changed_.notify_all();
  }
}

Status GradientSync::finish(double* waited, double* busy) {
  double start = nowSeconds();
  if (thread_.joinable()) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return completed_ == bucketCount(); });
    *busy += busySeconds_;
    TRAIN_RETURN_IF_ERROR(error_);
  } else {
    for (auto& bucket : buckets_) TRAIN_RETURN_IF_ERROR(exchange(bucket));
    if (dpSize_ > 1) *busy += nowSeconds() - start;
  }
  *waited += nowSeconds() - start;
  return Status();
}

Status GradientSync::broadcastParams() {
  if (dpSize_ == 1) return Status();
  auto& params = model_->params();
  return checkBraid(braidBroadcast(params.data(), params.data(), params.size(), braidFloat32,
                                   /*root=*/0, dp_, nullptr),
                    dp_, "parameter-server broadcast of the updated weights");
}

}  // namespace braid::train
