/*
 * The training loop of one rank: data → pipeline step → gradient exchange →
 * optimizer, epoch after epoch, with evaluation on the test set.
 *
 * Every rank runs the same loop. Ranks agree on everything that decides
 * control flow without extra messages (the shuffled order, batch slices and
 * step counts are pure functions of the options); the one thing they must
 * exchange each step is the loss and, for fp16, whether any gradient
 * overflowed — one two-float all-reduce over the world communicator, which
 * also gives rank 0 the loss it reports.
 */
#pragma once

#include <memory>
#include <vector>

#include "train/dataset.h"
#include "train/grid.h"
#include "train/metrics.h"
#include "train/options.h"
#include "train/status.h"

namespace braid::train {

class Trainer {
 public:
  Trainer(const Options& options, const FashionMnist& data, Grid& grid);
  ~Trainer();

  Status run();

 private:
  Status trainStep(const std::vector<int>& order, int first, float lr, StepRecord* record);
  Status evaluate(double* loss, double* accuracy);
  Status agree(float* values, int count, bool contribute);
  float learningRate(long step, long totalSteps) const;
  void buildMicroBatches(const Dataset& data, const std::vector<int>& order, int first,
                         int globalRows, int count, std::vector<MicroBatch>* micro) const;

  const Options& options_;
  const FashionMnist& data_;
  Grid& grid_;
  std::unique_ptr<StageModel> model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<GradientSync> sync_;
  std::unique_ptr<PipelineStep> pipeline_;
  std::vector<LayerGroup> layerGroups_;
  float lossScale_ = 1.0f;
  int goodSteps_ = 0;
};

}  // namespace braid::train
