/*
 * One training step of one pipeline stage over M micro-batches.
 *
 * The stage runs six primitives per micro-batch m — receive the input
 * (from stage p−1, or the data on the first stage), compute forward, send the
 * output (or, on the last stage, compute the loss and its gradient), receive
 * the output gradient, compute backward, send the input gradient — in the
 * order a schedule dictates:
 *
 *   gpipe  all M forwards, then all M backwards in reverse order (Huang et al.
 *          2019): M micro-batches of activations are alive at the peak.
 *   1f1b   p−1−s warm-up forwards on stage s, then one forward and one
 *          backward alternately, then the remaining backwards (PipeDream-Flush,
 *          Narayanan et al. 2021): at most p−s micro-batches alive. Where a
 *          send and a receive between the same two stages meet (send output
 *          and receive its gradient, send a gradient and receive the next
 *          input), they are issued in one braid group, so blocking
 *          point-to-point calls cannot deadlock.
 *
 * Both schedules feed the same gradients into the same buffers; only the
 * order of accumulation over micro-batches differs. Gradients of a layer are
 * final when the step's M-th backward passes it, which is when the
 * data-parallel bucket holding it may start (GradientSync::layerDone).
 */
#pragma once

#include <vector>

#include "braid.h"
#include "train/cross_entropy.h"
#include "train/gradient_sync.h"
#include "train/model.h"
#include "train/status.h"

namespace braid::train {

enum class Schedule { kGpipe, kOneFOneB };

/// What one micro-batch brings: its row count, and the data the stage needs.
struct MicroBatch {
  int rows = 0;
  std::vector<float> input;  // rows × 784 on the first stage, else empty
  std::vector<int> labels;   // rows on the last stage, else empty
};

struct StageContext {
  StageModel* model = nullptr;
  braidComm_t pp = nullptr, tp = nullptr;
  int stage = 0, stages = 1, tpSize = 1;
  Range classes;           // this tensor-parallel rank's classes (last stage)
  float lossScale = 1.0f;  // dlogits = ∂(lossScale · Σ loss)/∂z
};

class PipelineStep {
 public:
  explicit PipelineStep(const StageContext& context) : ctx_(context) {}

  void setLossScale(float scale) { ctx_.lossScale = scale; }

  /// Forward and backward of all micro-batches; sums the loss into *loss (last stage).
  /// Calls sync->layerDone as layers become final (sync may be null).
  Status train(Schedule schedule, std::vector<MicroBatch>& micro, GradientSync* sync,
               CrossEntropyResult* loss, StepTimes* times);
  /// The most micro-batches whose activations were alive at once in the last train().
  int peakLive() const { return peakLive_; }
  /// Forward only (evaluation), micro-batches in order; loss and accuracy on the last stage.
  Status evaluate(std::vector<MicroBatch>& micro, CrossEntropyResult* result, StepTimes* times);

 private:
  struct Slot {                            // per micro-batch state
    std::vector<std::vector<float>> acts;  // acts[i] = input of layer i; acts.back() = output
    std::vector<float> grad;               // the gradient flowing backward
  };
  struct Transfer {
    bool send;
    float* data;
    size_t count;
    int peer;
  };

  void receiveInput(int m, std::vector<Transfer>* ops);
  void sendOutput(int m, std::vector<Transfer>* ops);
  void receiveGrad(int m, std::vector<Transfer>* ops);
  void sendGrad(int m, std::vector<Transfer>* ops);
  Status communicate(const std::vector<Transfer>& ops, StepTimes* times);
  Status forward(int m, bool training, CrossEntropyResult* loss, StepTimes* times);
  Status backward(int m, StepTimes* times);
  // One micro-batch's forward (receive input, compute, send output) or backward
  // (receive gradient, compute, send gradient) with nothing overlapped: GPipe's
  // every step, 1F1B's warm-up and cool-down.
  Status forwardAlone(int m, CrossEntropyResult* loss, StepTimes* times);
  Status backwardAlone(int m, StepTimes* times);
  Status runGpipe(CrossEntropyResult* loss, StepTimes* times);
  Status runOneFOneB(CrossEntropyResult* loss, StepTimes* times);

  StageContext ctx_;
  std::vector<MicroBatch>* micro_ = nullptr;
  std::vector<Slot> slots_;
  GradientSync* sync_ = nullptr;
  int backwardsDone_ = 0;
  int live_ = 0, peakLive_ = 0;  // micro-batches whose activations are held
};

}  // namespace braid::train
