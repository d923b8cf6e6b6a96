/*
 * Pipeline schedules and the per-micro-batch primitives (see pipeline.h).
 */
#include "train/pipeline.h"

#include <algorithm>

#include "train/clock.h"

namespace braid::train {

void PipelineStep::receiveInput(int m, std::vector<Transfer>* ops) {
  Slot& slot = slots_[m];
  MicroBatch& batch = (*micro_)[m];
  slot.acts.assign(ctx_.model->layerCount() + 1, {});
  peakLive_ = std::max(peakLive_, ++live_);
  if (ctx_.stage == 0) {
    slot.acts[0] = batch.input;
    return;
  }
  slot.acts[0].resize(static_cast<size_t>(batch.rows) * ctx_.model->inputWidth());
  ops->push_back({false, slot.acts[0].data(), slot.acts[0].size(), ctx_.stage - 1});
}

void PipelineStep::sendOutput(int m, std::vector<Transfer>* ops) {
  if (ctx_.stage == ctx_.stages - 1) return;
  auto& out = slots_[m].acts.back();
  ops->push_back({true, out.data(), out.size(), ctx_.stage + 1});
}

void PipelineStep::receiveGrad(int m, std::vector<Transfer>* ops) {
  if (ctx_.stage == ctx_.stages - 1) return;  // the loss already wrote it
  Slot& slot = slots_[m];
  slot.grad.resize(static_cast<size_t>((*micro_)[m].rows) * ctx_.model->outputWidth());
  ops->push_back({false, slot.grad.data(), slot.grad.size(), ctx_.stage + 1});
}

void PipelineStep::sendGrad(int m, std::vector<Transfer>* ops) {
  if (ctx_.stage == 0) return;
  auto& grad = slots_[m].grad;
  ops->push_back({true, grad.data(), grad.size(), ctx_.stage - 1});
}

Status PipelineStep::communicate(const std::vector<Transfer>& ops, StepTimes* times) {
  if (ops.empty()) return Status();
  double start = nowSeconds();
  braidGroupStart();
  braidResult_t first = braidSuccess;
  for (const Transfer& op : ops) {
    braidResult_t result =
        op.send ? braidSend(op.data, op.count, braidFloat32, op.peer, ctx_.pp, nullptr)
                : braidRecv(op.data, op.count, braidFloat32, op.peer, ctx_.pp, nullptr);
    if (first == braidSuccess) first = result;
  }
  braidResult_t end = braidGroupEnd();
  if (first == braidSuccess) first = end;
  times->pp += nowSeconds() - start;
  return checkBraid(first, ctx_.pp,
                    "pipeline stage " + std::to_string(ctx_.stage) + " send/receive with stage " +
                        std::to_string(ops.front().peer));
}

Status PipelineStep::forward(int m, bool training, CrossEntropyResult* loss, StepTimes* times) {
  Slot& slot = slots_[m];
  MicroBatch& batch = (*micro_)[m];
  StageModel& model = *ctx_.model;
  for (int i = 0; i < model.layerCount(); ++i) {
    slot.acts[i + 1].resize(static_cast<size_t>(batch.rows) * model.layer(i).outWidth());
    TRAIN_RETURN_IF_ERROR(model.layer(i).forward(slot.acts[i].data(), batch.rows,
                                                 slot.acts[i + 1].data(), ctx_.tp, times));
  }
  if (ctx_.stage != ctx_.stages - 1) return Status();
  float* dlogits = nullptr;
  if (training) {
    slot.grad.resize(slot.acts.back().size());
    dlogits = slot.grad.data();
  }
  return crossEntropy(slot.acts.back().data(), batch.labels.data(), batch.rows, ctx_.classes,
                      ctx_.lossScale, dlogits, ctx_.tp, ctx_.tpSize, loss, times);
}

Status PipelineStep::backward(int m, StepTimes* times) {
  Slot& slot = slots_[m];
  const int rows = (*micro_)[m].rows;
  StageModel& model = *ctx_.model;
  const bool final = ++backwardsDone_ == static_cast<int>(micro_->size());
  std::vector<float> grad = std::move(slot.grad), dx;
  for (int i = model.layerCount() - 1; i >= 0; --i) {
    bool needInputGrad = i > 0 || ctx_.stage > 0;
    dx.assign(needInputGrad ? static_cast<size_t>(rows) * model.layer(i).inWidth() : 0, 0.0f);
    TRAIN_RETURN_IF_ERROR(
        model.layer(i).backward(slot.acts[i].data(), slot.acts[i + 1].data(), grad.data(), rows,
                                needInputGrad ? dx.data() : nullptr, ctx_.tp, times));
    if (final && sync_ != nullptr) sync_->layerDone(i);
    std::swap(grad, dx);
  }
  slot.grad = std::move(grad);  // the input gradient, for sendGrad
  slot.acts.clear();
  --live_;
  return Status();
}

Status PipelineStep::forwardAlone(int m, CrossEntropyResult* loss, StepTimes* times) {
  std::vector<Transfer> ops;
  receiveInput(m, &ops);
  TRAIN_RETURN_IF_ERROR(communicate(ops, times));
  TRAIN_RETURN_IF_ERROR(forward(m, true, loss, times));
  ops.clear();
  sendOutput(m, &ops);
  return communicate(ops, times);
}

Status PipelineStep::backwardAlone(int m, StepTimes* times) {
  std::vector<Transfer> ops;
  receiveGrad(m, &ops);
  TRAIN_RETURN_IF_ERROR(communicate(ops, times));
  TRAIN_RETURN_IF_ERROR(backward(m, times));
  ops.clear();
  sendGrad(m, &ops);
  return communicate(ops, times);
}

Status PipelineStep::runGpipe(CrossEntropyResult* loss, StepTimes* times) {
  const int count = static_cast<int>(micro_->size());
  for (int m = 0; m < count; ++m) TRAIN_RETURN_IF_ERROR(forwardAlone(m, loss, times));
  for (int m = count - 1; m >= 0; --m) TRAIN_RETURN_IF_ERROR(backwardAlone(m, times));
  return Status();
}

Status PipelineStep::runOneFOneB(CrossEntropyResult* loss, StepTimes* times) {
  const int count = static_cast<int>(micro_->size());
  const int warmup = std::min(ctx_.stages - ctx_.stage - 1, count);
  const int steady = count - warmup;
  for (int m = 0; m < warmup; ++m) TRAIN_RETURN_IF_ERROR(forwardAlone(m, loss, times));
  std::vector<Transfer> ops;
  if (steady > 0) {
    ops.clear();
    receiveInput(warmup, &ops);
    TRAIN_RETURN_IF_ERROR(communicate(ops, times));
  }
  for (int i = 0; i < steady; ++i) {
    TRAIN_RETURN_IF_ERROR(forward(warmup + i, true, loss, times));
    ops.clear();
    sendOutput(warmup + i, &ops);  // together with the gradient of micro-batch i
    receiveGrad(i, &ops);
    TRAIN_RETURN_IF_ERROR(communicate(ops, times));
    TRAIN_RETURN_IF_ERROR(backward(i, times));
    ops.clear();
    sendGrad(i, &ops);  // together with the next input
    if (i + 1 < steady) receiveInput(warmup + i + 1, &ops);
    TRAIN_RETURN_IF_ERROR(communicate(ops, times));
  }
  for (int m = steady; m < count; ++m) TRAIN_RETURN_IF_ERROR(backwardAlone(m, times));
  return Status();
}

Status PipelineStep::train(Schedule schedule, std::vector<MicroBatch>& micro, GradientSync* sync,
                           CrossEntropyResult* loss, StepTimes* times) {
  micro_ = &micro;
  sync_ = sync;
  backwardsDone_ = 0;
  live_ = peakLive_ = 0;
  slots_.assign(micro.size(), {});
  return schedule == Schedule::kGpipe ? runGpipe(loss, times) : runOneFOneB(loss, times);
}

Status PipelineStep::evaluate(std::vector<MicroBatch>& micro, CrossEntropyResult* result,
                              StepTimes* times) {
  micro_ = &micro;
  sync_ = nullptr;
  slots_.assign(micro.size(), {});
  for (int m = 0; m < static_cast<int>(micro.size()); ++m) {
    std::vector<Transfer> ops;
    receiveInput(m, &ops);
    TRAIN_RETURN_IF_ERROR(communicate(ops, times));
    TRAIN_RETURN_IF_ERROR(forward(m, false, result, times));
    ops.clear();
    sendOutput(m, &ops);
    TRAIN_RETURN_IF_ERROR(communicate(ops, times));
    slots_[m] = {};
  }
  return Status();
}

}  // namespace braid::train
