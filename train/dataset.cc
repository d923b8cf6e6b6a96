/*
 * Fashion-MNIST loading and batching (see dataset.h).
 */
#include "train/dataset.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "train/idx_file.h"
#include "train/random.h"

namespace braid::train {

Status loadSplit(const std::string& imagesPath, const std::string& labelsPath, Dataset* out) {
  IdxArray images, labels;
  TRAIN_RETURN_IF_ERROR(readIdxGz(imagesPath, &images));
  TRAIN_RETURN_IF_ERROR(readIdxGz(labelsPath, &labels));
  if (images.dims.size() != 3 || images.dims[1] != 28 || images.dims[2] != 28) {
    return Status::error(imagesPath + ": expected an N × 28 × 28 image array");
  }
  if (labels.dims.size() != 1) {
    return Status::error(labelsPath + ": expected a one-dimensional label array");
  }
  if (labels.dims[0] != images.dims[0]) {
    return Status::error(labelsPath + ": holds " + std::to_string(labels.dims[0]) + " labels but " +
                         imagesPath + " holds " + std::to_string(images.dims[0]) + " images");
  }
  for (size_t i = 0; i < labels.data.size(); ++i) {
    if (labels.data[i] >= kClasses) {
      return Status::error(labelsPath + ": label " + std::to_string(labels.data[i]) +
                           " of sample " + std::to_string(i) + " is not a class 0..9");
    }
  }
  out->count = static_cast<int>(images.dims[0]);
  out->pixels = std::move(images.data);
  out->labels = std::move(labels.data);
  return Status();
}

Status loadFashionMnist(const std::string& dir, FashionMnist* out) {
  TRAIN_RETURN_IF_ERROR(loadSplit(dir + "/train-images-idx3-ubyte.gz",
                                  dir + "/train-labels-idx1-ubyte.gz", &out->train));
  TRAIN_RETURN_IF_ERROR(loadSplit(dir + "/t10k-images-idx3-ubyte.gz",
                                  dir + "/t10k-labels-idx1-ubyte.gz", &out->test));
  if (out->train.count == 0) return Status::error(dir + ": the training set is empty");
  // Normalisation statistics of the training pixels, in double for exactness.
  double sum = 0, sumSquares = 0;
  for (uint8_t p : out->train.pixels) {
    double v = p / 255.0;
    sum += v;
    sumSquares += v * v;
  }
  double n = static_cast<double>(out->train.pixels.size());
  double mean = sum / n;
  out->mean = static_cast<float>(mean);
  out->stddev = static_cast<float>(std::sqrt(std::max(sumSquares / n - mean * mean, 1e-12)));
  return Status();
}

void gatherBatch(const Dataset& data, const FashionMnist& stats, const std::vector<int>& order,
                 int first, int rows, float* x, int* y) {
  const float scale = 1.0f / (255.0f * stats.stddev);
  const float shift = stats.mean / stats.stddev;
  for (int r = 0; r < rows; ++r) {
    int sample = order[first + r];
    const uint8_t* src = &data.pixels[static_cast<size_t>(sample) * kImagePixels];
    float* dst = x + static_cast<size_t>(r) * kImagePixels;
    for (int i = 0; i < kImagePixels; ++i) dst[i] = src[i] * scale - shift;
    y[r] = data.labels[sample];
  }
}

std::vector<int> epochOrder(int count, uint64_t seed, int epoch) {
  std::vector<int> order(count);
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed ^ 0x5eed0fda7aULL, static_cast<uint64_t>(epoch));
  for (int i = count - 1; i > 0; --i) {
    int j = static_cast<int>(rng.next() % static_cast<uint64_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

}  // namespace braid::train
