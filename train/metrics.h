/*
 * What a training run records: one StepRecord per step on every rank, the
 * CSV loss curve (rank 0), and the end-of-run timing table, in which rank 0
 * gathers each rank's medians so that one line per rank shows where its
 * step time went (compute, tensor-parallel all-reduces, pipeline waits,
 * exposed data-parallel exchange), the pipeline bubble it saw, and the most
 * micro-batches whose activations it held at once ("live": m on every stage
 * for GPipe, p − s on stage s for 1F1B).
 */
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "train/grid.h"
#include "train/layer.h"
#include "train/status.h"

namespace braid::train {

struct StepRecord {
  long step = 0;
  int epoch = 0;
  long samples = 0;  // seen so far, all replicas
  float lr = 0;
  double loss = 0;
  float lossScale = 1;
  bool skipped = false;        // fp16 overflow: no update
  double seconds = 0;          // the whole step
  double pipelineSeconds = 0;  // forward + backward over all micro-batches
  double dpBusySeconds = 0;    // time the gradient exchange ran (overlapped or not)
  StepTimes times;
  int peakLive = 0;  // most micro-batches holding activations at once on this stage
  bool evaluated = false;
  double evalLoss = 0, evalAccuracy = 0;
};

class CsvWriter {
 public:
  ~CsvWriter();
  Status open(const std::string& path);
  void write(const StepRecord& record);
  void close();

 private:
  FILE* file_ = nullptr;
};

/// Gathers every rank's medians to rank 0 and prints the timing table there.
Status reportTiming(const std::vector<StepRecord>& records, Grid& grid, int micro);

/// Runs the plotter on `csvPath`, writing `pngPath`; returns its failure as a Status.
Status plotCsv(const std::string& csvPath, const std::string& pngPath);

}  // namespace braid::train
