/*
 * The per-rank training loop (see trainer.h).
 */
#include "train/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>

#include "train/clock.h"

namespace braid::train {

Trainer::Trainer(const Options& options, const FashionMnist& data, Grid& grid)
    : options_(options), data_(data), grid_(grid) {
  std::vector<LayerSpec> plan = planModel(options.model);
  Range layers = stageLayers(plan, grid.shape().pp, grid.p());
  model_ = std::make_unique<StageModel>(plan, layers, grid.t(), grid.shape().tp);
  model_->initialise(options.seed);
  optimizer_ = std::make_unique<Optimizer>(options.optimizer, model_->params().size());
  sync_ =
      std::make_unique<GradientSync>(grid.dpComm(), grid.shape().dp, model_.get(), options.sync);
  for (int i = 0; i < model_->layerCount(); ++i) {
    // Flat layout of a layer: W, then b (layer.cc); sort each into sharded or replicated.
    const LinearShard& layer = model_->layer(i);
    Range slice = model_->layerSlice(i);
    int split = slice.begin + layer.weightCount();
    Range weights{slice.begin, split}, bias{split, slice.end}, none{slice.end, slice.end};
    if (layer.biasSharded()) {
      layerGroups_.push_back({slice, none});
    } else if (layer.weightsSharded()) {
      layerGroups_.push_back({weights, bias});
    } else {
      layerGroups_.push_back({none, slice});
    }
  }
  StageContext context;
  context.model = model_.get();
  context.pp = grid.ppComm();
  context.tp = grid.tpComm();
  context.stage = grid.p();
  context.stages = grid.shape().pp;
  context.tpSize = grid.shape().tp;
  context.classes = shardRange(kClasses, grid.shape().tp, grid.t());
  pipeline_ = std::make_unique<PipelineStep>(context);
  if (options.sync.precision == Precision::kFp16) lossScale_ = options.initialLossScale;
}

Trainer::~Trainer() = default;

void Trainer::buildMicroBatches(const Dataset& data, const std::vector<int>& order, int first,
                                int globalRows, int count, std::vector<MicroBatch>* micro) const {
  // This replica's contiguous slice of the global batch, cut into `count` micro-batches.
  Range mine = shardRange(globalRows, grid_.shape().dp, grid_.d());
  micro->assign(count, {});
  for (int m = 0; m < count; ++m) {
    Range rows = shardRange(mine.size(), count, m);
    MicroBatch& batch = (*micro)[m];
    batch.rows = rows.size();
    std::vector<float> pixels(static_cast<size_t>(batch.rows) * kImagePixels);
    std::vector<int> labels(batch.rows);
    gatherBatch(data, data_, order, first + mine.begin + rows.begin, batch.rows, pixels.data(),
                labels.data());
    if (grid_.firstStage()) batch.input = std::move(pixels);
    if (grid_.lastStage()) batch.labels = std::move(labels);
  }
}

Status Trainer::agree(float* values, int count, bool contribute) {
  if (!contribute) std::fill_n(values, count, 0.0f);
  if (grid_.shape().size() == 1) return Status();
  return checkBraid(
      braidAllReduce(values, values, count, braidFloat32, braidSum, grid_.world(), nullptr),
      grid_.world(), "world all-reduce of the step's loss");
}

float Trainer::learningRate(long step, long totalSteps) const {
  float lr = options_.lr;
  if (step < options_.warmupSteps) return lr * static_cast<float>(step + 1) / options_.warmupSteps;
  if (options_.lrSchedule == LrSchedule::kCosine && totalSteps > options_.warmupSteps) {
    double progress = static_cast<double>(step - options_.warmupSteps) /
                      static_cast<double>(totalSteps - options_.warmupSteps);
    lr *= static_cast<float>(0.5 * (1.0 + std::cos(std::numbers::pi * progress)));
  }
  return lr;
}

Status Trainer::trainStep(const std::vector<int>& order, int first, float lr, StepRecord* record) {
  const double start = nowSeconds();
  std::vector<MicroBatch> micro;
  buildMicroBatches(data_.train, order, first, options_.batch, options_.micro, &micro);
  model_->zeroGrads();
  sync_->beginStep();
  StepTimes& times = record->times;
  CrossEntropyResult loss;
  pipeline_->setLossScale(lossScale_ / static_cast<float>(options_.batch));
  double pipelineStart = nowSeconds();
  TRAIN_RETURN_IF_ERROR(pipeline_->train(options_.schedule, micro, sync_.get(), &loss, &times));
  record->pipelineSeconds = nowSeconds() - pipelineStart;
  record->peakLive = pipeline_->peakLive();
  TRAIN_RETURN_IF_ERROR(sync_->finish(&times.dp, &record->dpBusySeconds));

  // Only the parameter server's sum counts in ps mode; overflow shows as inf/nan.
  const bool updater = options_.sync.mode == DpMode::kRing || grid_.d() == 0;
  float overflow = 0.0f;
  if (options_.sync.precision == Precision::kFp16 && updater) {
    for (float g : model_->grads()) {
      if (!std::isfinite(g)) {
        overflow = 1.0f;
        break;
      }
    }
  }
  const bool reporter = grid_.lastStage() && grid_.t() == 0;
  float shared[2] = {reporter ? static_cast<float>(loss.lossSum) : 0.0f, overflow};
  TRAIN_RETURN_IF_ERROR(agree(shared, 2, true));
  record->loss = shared[0] / options_.batch;
  record->lossScale = lossScale_;
  record->lr = lr;

  if (shared[1] > 0.0f) {  // some replica overflowed: skip, and halve the scale
    record->skipped = true;
    lossScale_ = std::max(1.0f, lossScale_ / 2);
    goodSteps_ = 0;
  } else {
    if (updater) {
      double updateStart = nowSeconds();
      if (lossScale_ != 1.0f) {
        const float unscale = 1.0f / lossScale_;
        for (float& g : model_->grads()) g *= unscale;
      }
      TRAIN_RETURN_IF_ERROR(optimizer_->step(model_->params().data(), model_->grads().data(), lr,
                                             layerGroups_, grid_.tpComm(), grid_.shape().tp));
      times.compute += nowSeconds() - updateStart;
    }
    if (options_.sync.mode == DpMode::kParameterServer) {
      double broadcastStart = nowSeconds();
      TRAIN_RETURN_IF_ERROR(sync_->broadcastParams());
      times.dp += nowSeconds() - broadcastStart;
      record->dpBusySeconds += nowSeconds() - broadcastStart;
    }
    if (options_.sync.precision == Precision::kFp16 && ++goodSteps_ >= options_.lossScaleWindow) {
      lossScale_ *= 2;
      goodSteps_ = 0;
    }
  }
  record->seconds = nowSeconds() - start;
  return Status();
}

Status Trainer::evaluate(double* loss, double* accuracy) {
  const Dataset& test = data_.test;
  const int total = options_.evalLimit > 0 ? std::min(options_.evalLimit, test.count) : test.count;
  if (total == 0) return Status::error(options_.dataDir + ": the test set is empty");
  std::vector<int> order(total);
  for (int i = 0; i < total; ++i) order[i] = i;
  CrossEntropyResult result;
  StepTimes times;
  for (int first = 0; first < total; first += options_.evalBatch) {
    int rows = std::min(options_.evalBatch, total - first);
    int mine = shardRange(rows, grid_.shape().dp, grid_.d()).size();
    if (mine == 0) continue;  // the whole replica (all its stages) skips alike
    int count = std::max(1, std::min(grid_.shape().pp, mine));
    std::vector<MicroBatch> micro;
    buildMicroBatches(test, order, first, rows, count, &micro);
    TRAIN_RETURN_IF_ERROR(pipeline_->evaluate(micro, &result, &times));
  }
  float shared[2] = {static_cast<float>(result.lossSum), static_cast<float>(result.correct)};
  TRAIN_RETURN_IF_ERROR(agree(shared, 2, grid_.lastStage() && grid_.t() == 0));
  *loss = shared[0] / total;
  *accuracy = shared[1] / total;
  return Status();
}

Status Trainer::run() {
  const int stepsPerEpoch = data_.train.count / options_.batch;
  long totalSteps = static_cast<long>(stepsPerEpoch) * options_.epochs;
  if (options_.maxSteps > 0) totalSteps = std::min(totalSteps, options_.maxSteps);
  const bool leader = grid_.worldRank() == 0;
  const bool tty = leader && !options_.quiet && isatty(STDOUT_FILENO);
  CsvWriter csv;
  const std::string& csvPath = options_.csvPath;  // --plot requires it (options.cc)
  if (leader && !csvPath.empty()) TRAIN_RETURN_IF_ERROR(csv.open(csvPath));

  std::vector<StepRecord> records;
  long step = 0;
  double runStart = nowSeconds(), windowStart = runStart;
  long windowSamples = 0;
  double evalLoss = 0, evalAccuracy = 0;
  for (int epoch = 0; epoch < options_.epochs && step < totalSteps; ++epoch) {
    std::vector<int> order = epochOrder(data_.train.count, options_.seed, epoch);
    for (int s = 0; s < stepsPerEpoch && step < totalSteps; ++s, ++step) {
      StepRecord record;
      record.step = step;
      record.epoch = epoch;
      TRAIN_RETURN_IF_ERROR(
          trainStep(order, s * options_.batch, learningRate(step, totalSteps), &record));
      record.samples = (step + 1) * options_.batch;
      windowSamples += options_.batch;
      bool endOfEpoch = s + 1 == stepsPerEpoch || step + 1 == totalSteps;
      if (endOfEpoch) {
        TRAIN_RETURN_IF_ERROR(evaluate(&evalLoss, &evalAccuracy));
        record.evaluated = true;
        record.evalLoss = evalLoss;
        record.evalAccuracy = evalAccuracy;
      }
      records.push_back(record);
      if (!leader) continue;
      csv.write(record);
      bool logLine = !options_.quiet && (step % options_.logEvery == 0 || endOfEpoch);
      if (tty || logLine) {
        double now = nowSeconds();
        double rate = windowSamples / std::max(now - windowStart, 1e-9);
        if (tty) {  // a bar of the whole run, redrawn in place
          constexpr int kBarWidth = 24;
          int filled = static_cast<int>(kBarWidth * (step + 1) / totalSteps);
          std::printf("\r[%s%s] ", std::string(filled, '#').c_str(),
                      std::string(kBarWidth - filled, '.').c_str());
        }
        std::printf("epoch %d/%d  step %ld/%ld  loss %.4f  %.0f samples/s%s", epoch + 1,
                    options_.epochs, step + 1, totalSteps, record.loss, rate,
                    record.skipped ? "  (fp16 overflow: step skipped)" : "");
        if (endOfEpoch) {
          std::printf("  test loss %.4f  accuracy %.2f%%", evalLoss, 100.0 * evalAccuracy);
        }
        std::printf("%s", tty && !endOfEpoch ? "\033[K" : "\n");
        std::fflush(stdout);
        if (logLine) windowStart = now, windowSamples = 0;
      }
    }
  }
  double elapsed = nowSeconds() - runStart;
  if (leader) {
    std::printf(
        "final test accuracy %.2f%% (test loss %.4f) after %ld steps, %.1f s, "
        "%.0f samples/s\n",
        100.0 * evalAccuracy, evalLoss, step, elapsed,
        step * options_.batch / std::max(elapsed, 1e-9));
  }
  TRAIN_RETURN_IF_ERROR(reportTiming(records, grid_, options_.micro));
  if (leader && !options_.plotPath.empty()) {
    csv.close();
    TRAIN_RETURN_IF_ERROR(plotCsv(csvPath, options_.plotPath));
  }
  return Status();
}

}  // namespace braid::train
