/*
 * Fashion-MNIST in memory, and the order in which training visits it.
 *
 * Images stay as bytes (47 MB for the training set) and are normalised into
 * float rows only for the samples of a batch, so that eight ranks on one host
 * can each hold the whole set. The per-epoch order is a Fisher-Yates shuffle
 * driven by (seed, epoch) alone: every rank computes the same permutation, and
 * a rank's share of a global batch is a contiguous slice of it, which is what
 * lets any dp × pp × tp layout see exactly the samples a single process sees.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/status.h"

namespace braid::train {

constexpr int kImagePixels = 28 * 28;
constexpr int kClasses = 10;

struct Dataset {
  int count = 0;
  std::vector<uint8_t> pixels;  // count × 784
  std::vector<uint8_t> labels;  // count, each < kClasses
};

struct FashionMnist {
  Dataset train;
  Dataset test;
  float mean = 0.0f;  // of the training pixels scaled to [0, 1]
  float stddev = 1.0f;
};

/// Loads {train,t10k}-{images-idx3,labels-idx1}-ubyte.gz from `dir`.
Status loadFashionMnist(const std::string& dir, FashionMnist* out);

/// Pairs an images file and a labels file, checking shapes and label range.
Status loadSplit(const std::string& imagesPath, const std::string& labelsPath, Dataset* out);

/// Writes the normalised rows of samples order[first, first + rows) into x (rows × 784),
/// and their labels into y.
void gatherBatch(const Dataset& data, const FashionMnist& stats, const std::vector<int>& order,
                 int first, int rows, float* x, int* y);

/// The visiting order of epoch `epoch`: a permutation of [0, count).
std::vector<int> epochOrder(int count, uint64_t seed, int epoch);

}  // namespace braid::train
