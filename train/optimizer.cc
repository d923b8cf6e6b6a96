/*
 * SGD with momentum, Adam and LAMB (see optimizer.h).
 */
#include "train/optimizer.h"

#include <cmath>

namespace braid::train {

Optimizer::Optimizer(const OptimizerConfig& config, size_t size)
    : config_(config), first_(size, 0.0f), second_(config.kind == OptimizerKind::kSgd ? 0 : size) {}

Status Optimizer::step(float* params, const float* grads, float lr,
                       const std::vector<LayerGroup>& layers, braidComm_t tp, int tpSize) {
  ++steps_;
  const size_t n = first_.size();
  if (config_.kind == OptimizerKind::kSgd) {
    for (size_t i = 0; i < n; ++i) {
      first_[i] = config_.momentum * first_[i] + grads[i];
      params[i] -= lr * first_[i];
    }
    return Status();
  }
  const float b1 = config_.beta1, b2 = config_.beta2;
  const float correction1 = 1.0f - static_cast<float>(std::pow(b1, steps_));
  const float correction2 = 1.0f - static_cast<float>(std::pow(b2, steps_));
  // Adam's direction, left in first_/second_ and (for lamb) evaluated twice.
  for (size_t i = 0; i < n; ++i) {
    first_[i] = b1 * first_[i] + (1.0f - b1) * grads[i];
    second_[i] = b2 * second_[i] + (1.0f - b2) * grads[i] * grads[i];
  }
  auto direction = [&](size_t i) {
    float mHat = first_[i] / correction1, vHat = second_[i] / correction2;
    return mHat / (std::sqrt(vHat) + config_.epsilon) + config_.weightDecay * params[i];
  };
  if (config_.kind == OptimizerKind::kAdam) {
    for (size_t i = 0; i < n; ++i) params[i] -= lr * direction(i);
    return Status();
  }
  // LAMB: squared norms per layer, [‖p‖², ‖u‖²] pairs, summed over tp for shards.
  std::vector<float> norms(2 * layers.size(), 0.0f), shardedNorms(2 * layers.size(), 0.0f);
  auto accumulate = [&](Range range, float* out) {
    double p2 = 0, u2 = 0;
    for (int i = range.begin; i < range.end; ++i) {
      double u = direction(i);
      p2 += double{params[i]} * params[i];
      u2 += u * u;
    }
    out[0] = static_cast<float>(p2);
    out[1] = static_cast<float>(u2);
  };
  for (size_t l = 0; l < layers.size(); ++l) {
    accumulate(layers[l].sharded, &shardedNorms[2 * l]);
    accumulate(layers[l].replicated, &norms[2 * l]);
  }
  if (tpSize > 1) {
    TRAIN_RETURN_IF_ERROR(
        checkBraid(braidAllReduce(shardedNorms.data(), shardedNorms.data(), shardedNorms.size(),
                                  braidFloat32, braidSum, tp, nullptr),
                   tp, "lamb: all-reduce of the layer norms"));
  }
  for (size_t l = 0; l < layers.size(); ++l) {
    float p2 = norms[2 * l] + shardedNorms[2 * l], u2 = norms[2 * l + 1] + shardedNorms[2 * l + 1];
    float trust = (p2 > 0.0f && u2 > 0.0f) ? std::sqrt(p2) / std::sqrt(u2) : 1.0f;
    for (Range range : {layers[l].sharded, layers[l].replicated}) {
      for (int i = range.begin; i < range.end; ++i) params[i] -= lr * trust * direction(i);
    }
  }
  return Status();
}

}  // namespace braid::train
