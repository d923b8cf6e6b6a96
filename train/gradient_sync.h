/*
 * Data-parallel gradient exchange, overlapped with the backward pass.
 *
 * The stage's flat gradient buffer (last layer first, see model.h) is cut at
 * layer boundaries into buckets of at least `bucketBytes`. Backward finishes
 * layers last-to-first; when the last layer of a bucket is final (the step's
 * last micro-batch has passed it), the bucket is handed to a communication
 * thread, which reduces it over the data-parallel communicator while the main
 * thread goes on with the layers below. finish() waits for the rest.
 *
 *   ring mode  braidAllReduce (sum) of each bucket: every replica gets the sum
 *              and runs the optimizer itself.
 *   ps mode    braidReduce of each bucket to replica 0 (the parameter server),
 *              which updates; broadcastParams() then sends the new weights out.
 *
 * With bf16/fp16 precision a bucket is converted to 16 bits, reduced in that
 * type (braid accumulates in fp32 and rounds per step), and converted back.
 * The communication thread is the only user of the data-parallel communicator
 * between beginStep() and finish(); the main thread uses the others.
 */
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "braid.h"
#include "train/half.h"
#include "train/model.h"
#include "train/status.h"

namespace braid::train {

enum class DpMode { kRing, kParameterServer };

struct SyncConfig {
  DpMode mode = DpMode::kRing;
  Precision precision = Precision::kFp32;
  size_t bucketBytes = 4 << 20;
  bool overlap = true;  // false: exchange every bucket in finish(), after backward
};

class GradientSync {
 public:
  GradientSync(braidComm_t dp, int dpSize, StageModel* model, const SyncConfig& config);
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  int bucketCount() const { return static_cast<int>(buckets_.size()); }

  void beginStep();
  /// Layer `layer` (stage-local index) has its final gradient for this step.
  void layerDone(int layer);
  /// Waits for every bucket; adds the exposed wait to *waited, the comm busy time to *busy.
  Status finish(double* waited, double* busy);
  /// Parameter-server mode: replica 0's parameters to every replica.
  Status broadcastParams();

 private:
  struct Bucket {
    Range slice;                 // of the flat buffers
    int lowestLayer;             // the bucket is ready once this layer is done
    std::vector<uint16_t> half;  // staging for 16-bit exchange
  };
  Status exchange(Bucket& bucket);
  void commLoop();

  braidComm_t dp_;
  int dpSize_;
  StageModel* model_;  // owned by the trainer, outlives this object
  SyncConfig config_;
  std::vector<Bucket> buckets_;
  std::vector<int> bucketOfLayer_;  // the bucket a layer's lowest index closes, or -1

  std::mutex mutex_;  // guards the fields below
  std::condition_variable changed_;
  std::deque<int> queue_;
  int completed_ = 0;
  double busySeconds_ = 0;
  Status error_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace braid::train
