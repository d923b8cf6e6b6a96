/*
 * Optimizers over a stage's flat parameter buffer, in fp32 (the master weights).
 *
 *   sgd   v = μ·v + g;  p −= lr·v                      (heavy-ball momentum)
 *   adam  Kingma & Ba 2015, with bias correction
 *   lamb  You et al. 2020: the Adam direction (plus weight decay) scaled per
 *         layer by the trust ratio ‖p‖ / ‖update‖. A tensor-parallel shard of a
 *         layer holds only part of p, so the squared norms of sharded layers
 *         are all-reduced over the tensor-parallel group first.
 *
 * Every rank that holds a parameter applies the same update to it, so
 * replicated copies stay bitwise equal.
 */
#pragma once

#include <string>
#include <vector>

#include "braid.h"
#include "train/layer.h"
#include "train/status.h"

namespace braid::train {

enum class OptimizerKind { kSgd, kAdam, kLamb };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kAdam;
  float momentum = 0.9f;
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
  float weightDecay = 0.0f;  // decoupled (AdamW-style) for adam and lamb
};

/// One layer's parameters within the flat buffers, cut into the part whose
/// norm is a sum over the tensor-parallel ranks and the part every rank holds whole.
struct LayerGroup {
  Range sharded;
  Range replicated;
};

class Optimizer {
 public:
  Optimizer(const OptimizerConfig& config, size_t size);
  /// One update with learning rate `lr` (grads already averaged and unscaled).
  Status step(float* params, const float* grads, float lr, const std::vector<LayerGroup>& layers,
              braidComm_t tp, int tpSize);

 private:
  OptimizerConfig config_;
  std::vector<float> first_, second_;  // momentum / Adam moments
  long steps_ = 0;
};

}  // namespace braid::train
