/*
 * Forward and backward of one linear layer shard (see layer.h).
 */
#include "train/layer.h"

#include <cmath>

#include "train/clock.h"
#include "train/gemm.h"
#include "train/random.h"

namespace braid::train {
namespace {

Status allReduceSum(float* data, size_t count, braidComm_t tp, StepTimes* times, const char* what) {
  double start = nowSeconds();
  Status status =
      checkBraid(braidAllReduce(data, data, count, braidFloat32, braidSum, tp, nullptr), tp, what);
  times->tp += nowSeconds() - start;
  return status;
}

}  // namespace

LinearShard::LinearShard(const LayerSpec& spec, int tpRank, int tpSize)
    : spec_(spec), tpSize_(tpSize) {
  inRange_ = {0, spec.in};
  outRange_ = {0, spec.out};
  if (spec.split == Split::kColumn || spec.split == Split::kClass) {
    outRange_ = shardRange(spec.out, tpSize, tpRank);
  } else if (spec.split == Split::kRow) {
    inRange_ = shardRange(spec.in, tpSize, tpRank);
  }
}

void LinearShard::bind(float* params, float* grads) {
  w_ = params;
  b_ = params + weightCount();
  gradW_ = grads;
  gradB_ = grads + weightCount();
}

void LinearShard::initialise(uint64_t seed) {
  // He initialisation for ReLU layers, LeCun for the (linear) output layer.
  double stddev = std::sqrt((spec_.relu ? 2.0 : 1.0) / spec_.in);
  for (int i = 0; i < inWidth(); ++i) {
    for (int j = 0; j < outWidth(); ++j) {
      uint64_t global = static_cast<uint64_t>(inRange_.begin + i) * spec_.out + outRange_.begin + j;
      w_[static_cast<size_t>(i) * outWidth() + j] =
          static_cast<float>(stddev * normalAt(seed, spec_.index + 1, global));
    }
  }
  for (int j = 0; j < biasCount(); ++j) b_[j] = 0.0f;
}

Status LinearShard::forward(const float* x, int rows, float* y, braidComm_t tp, StepTimes* times) {
  double start = nowSeconds();
  GemmArgs g;
  g.m = rows, g.n = outWidth(), g.k = inWidth();
  g.a = x, g.lda = inWidth(), g.b = w_, g.ldb = outWidth(), g.c = y, g.ldc = outWidth();
  gemm(g);
  times->compute += nowSeconds() - start;
  if (spec_.split == Split::kRow && tpSize_ > 1) {
    TRAIN_RETURN_IF_ERROR(allReduceSum(y, static_cast<size_t>(rows) * outWidth(), tp, times,
                                       "tensor-parallel all-reduce of a row-parallel output"));
  }
  start = nowSeconds();
  for (int r = 0; r < rows; ++r) {
    float* row = y + static_cast<size_t>(r) * outWidth();
    for (int j = 0; j < outWidth(); ++j) {
      float v = row[j] + b_[j];
      row[j] = (spec_.relu && v < 0.0f) ? 0.0f : v;
    }
  }
  times->compute += nowSeconds() - start;
  return Status();
}

Status LinearShard::backward(const float* x, const float* y, float* dy, int rows, float* dx,
                             braidComm_t tp, StepTimes* times) {
  double start = nowSeconds();
  const int out = outWidth();
  for (int r = 0; r < rows; ++r) {
    float* grad = dy + static_cast<size_t>(r) * out;
    const float* act = y + static_cast<size_t>(r) * out;
    if (spec_.relu) {
      for (int j = 0; j < out; ++j) grad[j] = act[j] > 0.0f ? grad[j] : 0.0f;
    }
    for (int j = 0; j < out; ++j) gradB_[j] += grad[j];
  }
  GemmArgs dw;  // dW += xᵀ·dy
  dw.transA = true, dw.m = inWidth(), dw.n = out, dw.k = rows;
  dw.a = x, dw.lda = inWidth(), dw.b = dy, dw.ldb = out, dw.c = gradW_, dw.ldc = out;
  dw.accumulate = true;
  gemm(dw);
  if (dx != nullptr) {
    GemmArgs dxArgs;  // dx = dy·Wᵀ
    dxArgs.transB = true, dxArgs.m = rows, dxArgs.n = inWidth(), dxArgs.k = out;
    dxArgs.a = dy, dxArgs.lda = out, dxArgs.b = w_, dxArgs.ldb = out;
    dxArgs.c = dx, dxArgs.ldc = inWidth();
    gemm(dxArgs);
  }
  times->compute += nowSeconds() - start;
  bool partialInput = spec_.split == Split::kColumn || spec_.split == Split::kClass;
  if (dx != nullptr && partialInput && tpSize_ > 1) {
    TRAIN_RETURN_IF_ERROR(allReduceSum(dx, static_cast<size_t>(rows) * inWidth(), tp, times,
                                       "tensor-parallel all-reduce of an input gradient"));
  }
  return Status();
}

}  // namespace braid::train
