/*
 * The MLP and the part of it one pipeline stage holds.
 *
 * planModel() lays out 784 → hidden × hiddenLayers → 10 and decides each
 * layer's tensor-parallel split: hidden layers go in Megatron pairs (column
 * then row); an odd last hidden layer stays replicated; the output layer is
 * class-parallel. With tp = 1 every split degenerates to the plain layer.
 *
 * A pipeline stage owns a contiguous run of layers (splitStages). Its
 * parameters and gradients are two flat float buffers with the *last* layer
 * first: backward finishes layers last-to-first, so finished gradients form
 * a growing prefix of the buffer, which the data-parallel buckets exploit.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "train/layer.h"

namespace braid::train {

struct ModelShape {
  int hidden = 1024;
  int hiddenLayers = 3;
};

/// Every layer of the model, input to output.
std::vector<LayerSpec> planModel(const ModelShape& shape);

/// The layers [begin, end) of stage `stage` of `stages`, balanced by weight count.
Range stageLayers(const std::vector<LayerSpec>& plan, int stages, int stage);

class StageModel {
 public:
  StageModel(const std::vector<LayerSpec>& plan, Range layers, int tpRank, int tpSize);

  int layerCount() const { return static_cast<int>(layers_.size()); }
  LinearShard& layer(int i) { return layers_[i]; }
  const LinearShard& layer(int i) const { return layers_[i]; }
  int inputWidth() const { return layers_.front().inWidth(); }
  int outputWidth() const { return layers_.back().outWidth(); }
  bool hasOutputLayer() const { return layers_.back().spec().split == Split::kClass; }

  std::vector<float>& params() { return params_; }
  std::vector<float>& grads() { return grads_; }
  /// [begin, end) of layer i's parameters within the flat buffers.
  Range layerSlice(int i) const { return slices_[i]; }

  void initialise(uint64_t seed);
  void zeroGrads();

 private:
  std::vector<LinearShard> layers_;
  std::vector<Range> slices_;
  std::vector<float> params_, grads_;
};

}  // namespace braid::train
