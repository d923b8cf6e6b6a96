/*
 * Model layout and stage ownership (see model.h).
 */
#include "train/model.h"

#include <algorithm>
#include <cmath>

#include "train/dataset.h"

namespace braid::train {

std::vector<LayerSpec> planModel(const ModelShape& shape) {
  std::vector<LayerSpec> plan;
  int in = kImagePixels;
  for (int i = 0; i < shape.hiddenLayers; ++i) {
    LayerSpec spec;
    spec.index = i, spec.in = in, spec.out = shape.hidden, spec.relu = true;
    // Even layers open a Megatron pair when a partner follows; odd layers close it.
    bool partnerFollows = i + 1 < shape.hiddenLayers;
    spec.split = i % 2 == 1 ? Split::kRow : partnerFollows ? Split::kColumn : Split::kReplicated;
    plan.push_back(spec);
    in = shape.hidden;
  }
  LayerSpec output;
  output.index = shape.hiddenLayers, output.in = in, output.out = kClasses;
  output.split = Split::kClass, output.relu = false;
  plan.push_back(output);
  return plan;
}

Range stageLayers(const std::vector<LayerSpec>& plan, int stages, int stage) {
  // Greedy cut on cumulative weight count, at least one layer per stage.
  const int n = static_cast<int>(plan.size());
  std::vector<double> prefix(n + 1, 0.0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + double{1.0} * plan[i].in * plan[i].out;
  std::vector<int> cut(stages + 1, 0);
  cut[stages] = n;
  for (int s = 1; s < stages; ++s) {
    double target = prefix[n] * s / stages;
    int best = cut[s - 1] + 1;
    for (int i = best; i <= n - (stages - s); ++i) {
      if (std::abs(prefix[i] - target) < std::abs(prefix[best] - target)) best = i;
    }
    cut[s] = best;
  }
  return {cut[stage], cut[stage + 1]};
}

StageModel::StageModel(const std::vector<LayerSpec>& plan, Range layers, int tpRank, int tpSize) {
  for (int i = layers.begin; i < layers.end; ++i) layers_.emplace_back(plan[i], tpRank, tpSize);
  // Flat layout, last layer first (see model.h).
  slices_.resize(layers_.size());
  int offset = 0;
  for (int i = layerCount() - 1; i >= 0; --i) {
    int size = layers_[i].weightCount() + layers_[i].biasCount();
    slices_[i] = {offset, offset + size};
    offset += size;
  }
  params_.assign(offset, 0.0f);
  grads_.assign(offset, 0.0f);
  for (int i = 0; i < layerCount(); ++i) {
    layers_[i].bind(params_.data() + slices_[i].begin, grads_.data() + slices_[i].begin);
  }
}

void StageModel::initialise(uint64_t seed) {
  for (auto& layer : layers_) layer.initialise(seed);
}

void StageModel::zeroGrads() { std::fill(grads_.begin(), grads_.end(), 0.0f); }

}  // namespace braid::train
