// Fitting and checking the cost model against measurements (see calibration.h).
//
// The fit is weighted linear least squares in three unknowns (overhead, step
// latency, seconds per byte) with weights 1/measured^2, i.e. relative error. A
// negative solution is not physical; the fit then tries every subset of the unknowns
// held at zero and keeps the best non-negative one (7 small solves).
#include "topology/calibration.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <tuple>

namespace braid::topo {
namespace {

constexpr double kInfiniteGBps = 1e9;

std::vector<std::string> splitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, ',')) out.push_back(cell);
  return out;
}

bool toDouble(const std::string& text, double* out) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

// Solves the weighted least squares over the columns in `use`; false if singular.
bool solve(const std::vector<std::array<double, 3>>& x, const std::vector<double>& y,
           const std::array<bool, 3>& use, std::array<double, 3>* beta) {
  double a[3][4] = {};
  for (size_t i = 0; i < x.size(); ++i) {
    const double w = 1.0 / (y[i] * y[i]);
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) a[r][c] += w * x[i][r] * x[i][c];
      a[r][3] += w * x[i][r] * y[i];
    }
  }
  for (int r = 0; r < 3; ++r) {
    if (use[r]) continue;
    for (int c = 0; c < 4; ++c) a[r][c] = 0;
    for (int c = 0; c < 3; ++c) a[c][r] = 0;
    a[r][r] = 1;
  }
  for (int col = 0; col < 3; ++col) {  // Gauss-Jordan with partial pivoting
    int pivot = col;
    for (int r = col + 1; r < 3; ++r) {
      if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
    }
    if (std::fabs(a[pivot][col]) < 1e-300) return false;
    std::swap(a[col], a[pivot]);
    for (int r = 0; r < 3; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (int c = 0; c < 4; ++c) a[r][c] -= f * a[col][c];
    }
  }
  for (int r = 0; r < 3; ++r) (*beta)[r] = a[r][3] / a[r][r];
  return true;
}

double relativeCost(const std::vector<std::array<double, 3>>& x, const std::vector<double>& y,
                    const std::array<double, 3>& beta) {
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double p = beta[0] * x[i][0] + beta[1] * x[i][1] + beta[2] * x[i][2];
    sum += (p - y[i]) * (p - y[i]) / (y[i] * y[i]);
  }
  return sum;
}

CostParams fitOne(const std::vector<Sample>& samples, int cores) {
  std::vector<std::array<double, 3>> x;
  std::vector<double> y;
  for (const Sample& s : samples) {
    std::optional<Shape> shape = shapeOf(s.kind, s.algorithm, s.nranks, s.sizeBytes);
    if (!shape || s.us <= 0) continue;
    x.push_back({1.0, shape->steps, shape->wireBytes});
    y.push_back(s.us / oversubscription(s.nranks, cores));
  }
  std::array<double, 3> best = {0, 0, 0};
  double bestCost = INFINITY;
  for (int mask = 1; mask < 8; ++mask) {
    std::array<bool, 3> use = {(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0};
    std::array<double, 3> beta = {0, 0, 0};
    if (!solve(x, y, use, &beta)) continue;
    if (beta[0] < 0 || beta[1] < 0 || beta[2] < 0) continue;
    double cost = relativeCost(x, y, beta);
    if (cost < bestCost) {
      bestCost = cost;
      best = beta;
    }
  }
  CostParams params;
  params.overheadUs = best[0];
  params.stepUs = best[1];
  params.gbps = best[2] > 0 ? 1.0 / (best[2] * 1e3) : kInfiniteGBps;
  return params;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

Result<std::vector<Sample>> parseSamples(const std::string& csv) {
  std::vector<Sample> samples;
  std::stringstream in(csv);
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.empty() || line[0] == '#' || line.rfind("link,", 0) == 0) continue;
    std::vector<std::string> cells = splitCsv(line);
    auto bad = [&](int column, const std::string& what) {
      return invalidArgument("calibration CSV line " + std::to_string(lineNo) + ", column " +
                             std::to_string(column) + ": " + what);
    };
    if (cells.size() != 6) return bad(0, "expected link,collective,algorithm,nranks,size,us");
    Sample s;
    s.link = cells[0];
    std::optional<coll::CollKind> kind = collKindFromName(cells[1]);
    if (!kind) return bad(2, "unknown collective '" + cells[1] + "'");
    s.kind = *kind;
    s.algorithm = cells[2];
    double n = 0;
    if (!toDouble(cells[3], &n) || n < 1 || n > 1e6 || n != std::floor(n)) {
      return bad(4, "'" + cells[3] + "' is not a rank count");
    }
    s.nranks = static_cast<int>(n);
    if (!toDouble(cells[4], &s.sizeBytes) || s.sizeBytes < 0) return bad(5, "bad size");
    if (!toDouble(cells[5], &s.us) || s.us <= 0) return bad(6, "bad time");
    if (!shapeOf(s.kind, s.algorithm, s.nranks, s.sizeBytes)) {
      return bad(3, "no shape for " + cells[1] + "/" + cells[2]);
    }
    samples.push_back(s);
  }
  return samples;
}

double oversubscription(int nranks, int cores) {
  return cores > 0 && nranks > cores ? static_cast<double>(nranks) / cores : 1.0;
}

CostModel fitModel(const std::vector<Sample>& samples, int cores) {
  std::map<std::tuple<std::string, int, std::string>, std::vector<Sample>> groups;
  for (const Sample& s : samples) {
    groups[{s.link, static_cast<int>(s.kind), s.algorithm}].push_back(s);
  }
  CostModel model;
  for (const auto& [key, group] : groups) {
    model.set({group[0].kind, group[0].algorithm, Protocol::kSimple, group[0].link,
               fitOne(group, cores)});
  }
  return model;
}

FitReport evaluate(const CostModel& model, const std::vector<Sample>& samples, int cores) {
  FitReport report;
  std::vector<double> errors;
  // (link, kind, n, size) -> algorithm -> (measured, predicted)
  std::map<std::tuple<std::string, int, int, double>,
           std::map<std::string, std::pair<double, double>>>
      cases;
  for (const Sample& s : samples) {
    std::optional<double> p =
        model.predictUs(s.kind, s.algorithm, Protocol::kSimple, s.link, s.nranks, s.sizeBytes);
    if (!p) continue;
    *p *= oversubscription(s.nranks, cores);
    ++report.predicted;
    errors.push_back(std::fabs(*p - s.us) / s.us);
    cases[{s.link, static_cast<int>(s.kind), s.nranks, s.sizeBytes}][s.algorithm] = {s.us, *p};
  }
  report.medianRelError = percentile(errors, 0.5);
  report.p90RelError = percentile(errors, 0.9);
  double regretSum = 0;
  for (const auto& [key, algos] : cases) {
    if (algos.size() < 2) continue;
    const std::pair<double, double>* measuredBest = nullptr;
    const std::pair<double, double>* modelPick = nullptr;
    for (const auto& [name, times] : algos) {
      if (!measuredBest || times.first < measuredBest->first) measuredBest = &times;
      if (!modelPick || times.second < modelPick->second) modelPick = &times;
    }
    ++report.cases;
    if (modelPick == measuredBest) ++report.agreed;
    double regret = modelPick->first / measuredBest->first - 1;
    regretSum += regret;
    report.maxRegret = std::max(report.maxRegret, regret);
  }
  report.meanRegret = report.cases ? regretSum / report.cases : 0;
  return report;
}

std::string toCppTable(const CostModel& model) {
  std::string out;
  for (const CostEntry& e : model.entries()) {
    char line[256];
    std::snprintf(line, sizeof(line), "    {\"%s\", \"%s\", \"%s\", %.3g, %.3g, %.4g},\n",
                  coll::collName(e.kind), e.algorithm.c_str(), e.link.c_str(), e.params.overheadUs,
                  e.params.stepUs, e.params.gbps);
    out += line;
  }
  return out;
}

}  // namespace braid::topo
