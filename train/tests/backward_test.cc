/*
 * Backward passes against finite differences: a two-layer model (ReLU hidden
 * layer, linear output, softmax cross-entropy) on one rank, where every
 * analytic gradient must match (L(θ+h) − L(θ−h)) / 2h evaluated in double-
 * rounded float forward passes. Also the cross-entropy alone against a direct
 * log-softmax.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "train/cross_entropy.h"
#include "train/layer.h"
#include "train/random.h"

namespace braid::train {
namespace {

struct TinyModel {
  LayerSpec hiddenSpec{0, 6, 5, Split::kReplicated, true};
  LayerSpec outputSpec{1, 5, 4, Split::kClass, false};
  LinearShard hidden{hiddenSpec, 0, 1}, output{outputSpec, 0, 1};
  std::vector<float> params, grads;
  std::vector<float> x;
  std::vector<int> labels = {0, 3, 2};
  int rows = 3;

  TinyModel() {
    size_t h = hidden.weightCount() + hidden.biasCount();
    size_t o = output.weightCount() + output.biasCount();
    params.assign(h + o, 0), grads.assign(h + o, 0);
    hidden.bind(params.data(), grads.data());
    output.bind(params.data() + h, grads.data() + h);
    hidden.initialise(3);
    output.initialise(3);
    for (size_t i = 0; i < params.size(); ++i) params[i] += 0.1f * float(normalAt(9, 1, i));
    x.resize(rows * 6);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(normalAt(9, 2, i));
  }

  double loss(bool backward) {
    StepTimes times;
    std::vector<float> h(rows * 5), z(rows * 4), dz(rows * 4), dh(rows * 5), dx(rows * 6);
    EXPECT_TRUE(hidden.forward(x.data(), rows, h.data(), nullptr, &times).ok());
    EXPECT_TRUE(output.forward(h.data(), rows, z.data(), nullptr, &times).ok());
    CrossEntropyResult result;
    EXPECT_TRUE(crossEntropy(z.data(), labels.data(), rows, {0, 4}, 1.0f,
                             backward ? dz.data() : nullptr, nullptr, 1, &result, &times)
                    .ok());
    if (backward) {
      EXPECT_TRUE(
          output.backward(h.data(), z.data(), dz.data(), rows, dh.data(), nullptr, &times).ok());
      EXPECT_TRUE(
          hidden.backward(x.data(), h.data(), dh.data(), rows, dx.data(), nullptr, &times).ok());
    }
    return result.lossSum;
  }
};

TEST(Backward, MatchesFiniteDifferences) {
  TinyModel model;
  model.loss(true);
  const float h = 1e-2f;
  int checked = 0;
  for (size_t i = 0; i < model.params.size(); ++i) {
    float saved = model.params[i];
    model.params[i] = saved + h;
    double up = model.loss(false);
    model.params[i] = saved - h;
    double down = model.loss(false);
    model.params[i] = saved;
    double numeric = (up - down) / (2 * h);
    EXPECT_NEAR(model.grads[i], numeric, 2e-3 + 2e-2 * std::fabs(numeric)) << "parameter " << i;
    ++checked;
  }
  EXPECT_EQ(checked, 6 * 5 + 5 + 5 * 4 + 4);
}

TEST(CrossEntropy, MatchesLogSoftmax) {
  const int rows = 4, classes = 7;
  std::vector<float> z(rows * classes), dz(rows * classes);
  for (size_t i = 0; i < z.size(); ++i) z[i] = float(3 * normalAt(4, 4, i));
  std::vector<int> labels = {0, 6, 3, 3};
  CrossEntropyResult result;
  StepTimes times;
  ASSERT_TRUE(crossEntropy(z.data(), labels.data(), rows, {0, classes}, 0.5f, dz.data(), nullptr, 1,
                           &result, &times)
                  .ok());
  double expected = 0;
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (int c = 0; c < classes; ++c) sum += std::exp(double(z[r * classes + c]));
    expected += std::log(sum) - z[r * classes + labels[r]];
    for (int c = 0; c < classes; ++c) {
      double p = std::exp(double(z[r * classes + c])) / sum;
      EXPECT_NEAR(dz[r * classes + c], 0.5 * (p - (c == labels[r])), 1e-6);
    }
  }
  EXPECT_NEAR(result.lossSum, expected, 1e-4);
}

}  // namespace
}  // namespace braid::train
