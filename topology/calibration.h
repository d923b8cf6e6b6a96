// Calibration: fits the cost model's constants to measured times and says how well
// the fitted model predicts them.
//
// Input is a CSV that topology/calibration/medians.py writes from braid-perf JSON runs:
//   link,collective,algorithm,nranks,size,us
// (size as braid-perf reports it; us the median over rounds). For each (collective,
// algorithm, link) the fit minimises the squared *relative* error of
// overhead + steps*stepLatency + bytes/bandwidth over all sizes and rank counts, with
// every constant kept >= 0, after dividing each time by the oversubscription of its run
// (ranks per core). Relative error, because a tuner must rank 2 us against 3 us
// as surely as 2 ms against 3 ms.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "topology/cost_model.h"

namespace braid::topo {

struct Sample {
  std::string link;
  coll::CollKind kind;
  std::string algorithm;
  int nranks = 0;
  double sizeBytes = 0;
  double us = 0;
};

/// Samples from the CSV text; errors name the line and column.
Result<std::vector<Sample>> parseSamples(const std::string& csv);

/// How many ranks share each core when `nranks` run on `cores` cores (at least 1): ranks
/// beyond the cores take turns, which stretches every term of the model alike.
double oversubscription(int nranks, int cores);

/// A model fitted to `samples` (protocol simple), measured with `cores` cores for the ranks.
/// Times are divided by oversubscription() first, so the constants describe one rank
/// with a core of its own.
CostModel fitModel(const std::vector<Sample>& samples, int cores);

struct FitReport {
  int predicted = 0;          // samples the model has constants for
  double medianRelError = 0;  // |predicted - measured| / measured over all samples
  double p90RelError = 0;
  int cases = 0;          // (link, collective, nranks, size) with more than one algorithm
  int agreed = 0;         // ... where the model's fastest is the measured fastest
  double meanRegret = 0;  // measured time of the model's pick / measured best, minus 1
  double maxRegret = 0;
};

/// How `model` predicts `samples`, and how often it picks the measured-fastest algorithm.
FitReport evaluate(const CostModel& model, const std::vector<Sample>& samples, int cores);

/// The model as C++ initialiser rows {collective, algorithm, link, overhead, step, GB/s},
/// the form of the table in calibrated_constants.cc.
std::string toCppTable(const CostModel& model);

}  // namespace braid::topo
