/*
 * One linear layer of the MLP, as held by one tensor-parallel rank.
 *
 * The layer is y = act(x·W + b) with W stored in × out (row-major). Tensor
 * parallelism splits it in one of four ways (Megatron-LM, Shoeybi et al. 2019):
 *
 *   kReplicated  every rank holds all of W; no communication.
 *   kColumn      W split by output columns: x is whole, y is this rank's slice
 *                of the outputs. Backward: dx is a partial sum over the ranks
 *                and is all-reduced (Megatron's "f" operator) when it is needed
 *                (it is not for the first layer, whose input is the data).
 *   kRow         W split by input rows: x is this rank's slice, x·W is a
 *                partial sum, all-reduced in forward ("g"); b is replicated and
 *                added after the sum. Backward needs no communication.
 *   kClass       the output layer split by classes, like kColumn; its logits
 *                stay sharded and go to the fused cross-entropy (cross_entropy.h).
 *
 * A column layer followed by a row layer is the Megatron pair: one all-reduce
 * forward, one backward, however wide the layers. Parameters and gradients
 * live in the stage's flat buffers (model.h); the layer holds views into them.
 */
#pragma once

#include <cstdint>

#include "braid.h"
#include "train/status.h"

namespace braid::train {

enum class Split { kReplicated, kColumn, kRow, kClass };

/// The half-open range [begin, end) of part `index` when `n` items are cut into `parts`.
struct Range {
  int begin = 0, end = 0;
  int size() const { return end - begin; }
};
inline Range shardRange(int n, int parts, int index) {
  return {static_cast<int>(int64_t{n} * index / parts),
          static_cast<int>(int64_t{n} * (index + 1) / parts)};
}

struct LayerSpec {
  int index = 0;  // position in the whole model (seeds its initial weights)
  int in = 0, out = 0;
  Split split = Split::kReplicated;
  bool relu = true;
};

/// Wall-clock seconds spent, split by what the time went to.
struct StepTimes {
  double compute = 0;  // GEMMs and elementwise work
  double tp = 0;       // tensor-parallel all-reduces
  double pp = 0;       // waiting in pipeline sends/receives
  double dp = 0;       // waiting for the data-parallel gradient exchange
};

class LinearShard {
 public:
  LinearShard(const LayerSpec& spec, int tpRank, int tpSize);

  const LayerSpec& spec() const { return spec_; }
  int inWidth() const { return inRange_.size(); }    // columns of x on this rank
  int outWidth() const { return outRange_.size(); }  // columns of y on this rank
  int weightCount() const { return inWidth() * outWidth(); }
  int biasCount() const { return outWidth(); }
  /// True when the rank's W (or b) is a slice the other tensor-parallel ranks do not hold
  /// (a row-parallel layer shards W but replicates b).
  bool weightsSharded() const { return spec_.split != Split::kReplicated && tpSize_ > 1; }
  bool biasSharded() const { return weightsSharded() && spec_.split != Split::kRow; }

  /// Points the layer at its parameters and gradients (weightCount() + biasCount() each).
  void bind(float* params, float* grads);
  /// He-initialises this rank's slice of W from (seed, layer index); zeroes b.
  void initialise(uint64_t seed);

  /// y = act(x·W + b) for `rows` rows; x has inWidth() columns, y outWidth().
  Status forward(const float* x, int rows, float* y, braidComm_t tp, StepTimes* times);
  /// Accumulates dW, db from x and dy (dy is first masked by the activation's
  /// derivative, in place, using y); writes dx when it is not null.
  Status backward(const float* x, const float* y, float* dy, int rows, float* dx, braidComm_t tp,
                  StepTimes* times);

 private:
  LayerSpec spec_;
  int tpSize_;
  Range inRange_, outRange_;  // this rank's slice of the inputs and outputs
  float* w_ = nullptr;
  float* b_ = nullptr;
  float* gradW_ = nullptr;
  float* gradB_ = nullptr;
};

}  // namespace braid::train
