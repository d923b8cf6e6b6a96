/*
 * braid-train's command line.
 *
 * parseOptions() only checks what it can alone (syntax, ranges, that the
 * batch splits into micro-batches on every replica); that dp × pp × tp equals
 * the job's size is checked once the communicator exists (Grid::create).
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/gradient_sync.h"
#include "train/grid.h"
#include "train/model.h"
#include "train/optimizer.h"
#include "train/pipeline.h"
#include "train/status.h"

namespace braid::train {

enum class LrSchedule { kConstant, kCosine };

struct Options {
  GridShape grid;
  ModelShape model;
  int epochs = 1;
  long maxSteps = 0;  // 0: whole epochs
  int batch = 128;    // global batch, over all replicas and micro-batches
  int micro = 1;      // micro-batches per replica per step (accumulation / pipelining)
  Schedule schedule = Schedule::kOneFOneB;
  OptimizerConfig optimizer;
  float lr = -1.0f;  // -1: the optimizer's default
  LrSchedule lrSchedule = LrSchedule::kConstant;
  int warmupSteps = 0;
  SyncConfig sync;
  uint64_t seed = 1;
  std::string dataDir = "/usr/share/datasets/fashion-mnist";
  std::string csvPath, plotPath;
  int evalLimit = 0;                  // 0: the whole test set
  int evalBatch = 1000;               // global
  int logEvery = 50;                  // steps between progress lines when stdout is not a terminal
  float initialLossScale = 65536.0f;  // fp16 only
  int lossScaleWindow = 1000;         // fp16: good steps before the scale doubles
  bool quiet = false;
  bool help = false;
};

/// Parses argv; the error names the offending argument.
Status parseOptions(const std::vector<std::string>& args, Options* out);

/// The --help text.
std::string usage();

}  // namespace braid::train
