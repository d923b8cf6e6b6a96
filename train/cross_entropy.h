/*
 * Softmax cross-entropy over class-parallel logits, fused so that ranks
 * exchange three numbers per sample instead of the logits.
 *
 * Each tensor-parallel rank holds the logits of its own classes. The loss of a
 * sample is log Σ_c exp(z_c) − z_target, computed stably as
 *   m = max_c z_c                       (all-reduce max of the local maxima)
 *   s = Σ_c exp(z_c − m)                (all-reduce sum of the local sums)
 *   t = z_target                        (all-reduce sum: only its owner adds it)
 *   loss = log s + m − t
 * and the gradient of the local logits needs only m and s:
 *   dz_c = (exp(z_c − m) / s − [c == target]) · scale.
 * With one rank the all-reduces are skipped and this is ordinary cross-entropy.
 */
#pragma once

#include <vector>

#include "braid.h"
#include "train/layer.h"
#include "train/status.h"

namespace braid::train {

struct CrossEntropyResult {
  double lossSum = 0;  // Σ over the rows of the per-sample loss
  int correct = 0;     // rows whose arg-max class is the label (evaluation only: dlogits null)
};

/// logits: rows × classes.size() (this rank's classes); labels: global class ids.
/// Writes dlogits = ∂(scale · Σ loss)/∂logits when dlogits is not null.
Status crossEntropy(const float* logits, const int* labels, int rows, Range classes, float scale,
                    float* dlogits, braidComm_t tp, int tpSize, CrossEntropyResult* result,
                    StepTimes* times);

}  // namespace braid::train
