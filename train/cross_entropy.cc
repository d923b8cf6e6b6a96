/*
 * The fused class-parallel cross-entropy (see cross_entropy.h).
 */
#include "train/cross_entropy.h"

#include <climits>
#include <cmath>

#include "train/clock.h"

namespace braid::train {
namespace {

Status tpAllReduce(void* data, size_t count, braidDataType_t type, braidRedOp_t op, braidComm_t tp,
                   StepTimes* times, const char* what) {
  double start = nowSeconds();
  Status status = checkBraid(braidAllReduce(data, data, count, type, op, tp, nullptr), tp, what);
  times->tp += nowSeconds() - start;
  return status;
}

}  // namespace

Status crossEntropy(const float* logits, const int* labels, int rows, Range classes, float scale,
                    float* dlogits, braidComm_t tp, int tpSize, CrossEntropyResult* result,
                    StepTimes* times) {
  const int width = classes.size();
  double start = nowSeconds();
  std::vector<float> rowMax(rows), sums(2 * static_cast<size_t>(rows));
  std::vector<int32_t> argMax(rows);
  for (int r = 0; r < rows; ++r) {
    const float* z = logits + static_cast<size_t>(r) * width;
    float best = -INFINITY;
    int bestIndex = INT_MAX;  // a rank without classes never wins the arg-max
    for (int c = 0; c < width; ++c) {
      if (z[c] > best) best = z[c], bestIndex = classes.begin + c;
    }
    rowMax[r] = best;
    argMax[r] = bestIndex;
  }
  times->compute += nowSeconds() - start;
  std::vector<float> localMax = rowMax;
  if (tpSize > 1) {
    TRAIN_RETURN_IF_ERROR(tpAllReduce(rowMax.data(), rows, braidFloat32, braidMax, tp, times,
                                      "fused cross-entropy: all-reduce of the row maxima"));
  }
  start = nowSeconds();
  for (int r = 0; r < rows; ++r) {
    const float* z = logits + static_cast<size_t>(r) * width;
    float sum = 0.0f;
    for (int c = 0; c < width; ++c) sum += std::exp(z[c] - rowMax[r]);
    int target = labels[r] - classes.begin;
    sums[2 * r] = sum;
    sums[2 * r + 1] = (target >= 0 && target < width) ? z[target] : 0.0f;
    // Only the rank(s) holding the global maximum propose their arg-max.
    if (localMax[r] != rowMax[r]) argMax[r] = INT_MAX;
  }
  times->compute += nowSeconds() - start;
  if (tpSize > 1) {
    TRAIN_RETURN_IF_ERROR(tpAllReduce(sums.data(), sums.size(), braidFloat32, braidSum, tp, times,
                                      "fused cross-entropy: all-reduce of sum-exp and target"));
    if (dlogits == nullptr) {  // evaluation: the accuracy needs the global arg-max
      TRAIN_RETURN_IF_ERROR(tpAllReduce(argMax.data(), rows, braidInt32, braidMin, tp, times,
                                        "fused cross-entropy: all-reduce of the arg-max"));
    }
  }
  start = nowSeconds();
  for (int r = 0; r < rows; ++r) {
    float sum = sums[2 * r];
    result->lossSum += std::log(static_cast<double>(sum)) + rowMax[r] - sums[2 * r + 1];
    if (argMax[r] == labels[r]) ++result->correct;
    if (dlogits == nullptr) continue;
    const float* z = logits + static_cast<size_t>(r) * width;
    float* dz = dlogits + static_cast<size_t>(r) * width;
    for (int c = 0; c < width; ++c) {
      float p = std::exp(z[c] - rowMax[r]) / sum;
      dz[c] = (p - (classes.begin + c == labels[r] ? 1.0f : 0.0f)) * scale;
    }
  }
  times->compute += nowSeconds() - start;
  return Status();
}

}  // namespace braid::train
