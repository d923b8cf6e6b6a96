// braid-perf's output: nccl-tests' table on stdout (rank 0 only) and, with -J,
// the same numbers as JSON. Every rank keeps the results, so that every rank
// can tell whether any check failed and exit accordingly.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "bench.h"
#include "options.h"

namespace braid::perf {

class Report {
 public:
  /// Only a Report with `prints` set writes anything; `out` must outlive it.
  Report(const Options& options, int nranks, bool prints, std::FILE* out);

  /// The run's parameters, the braid settings from the environment, the ranks.
  void printHeader(const std::vector<std::string>& rankLines) const;
  /// The column titles, before the first row of `kind`.
  void printColumns(CollectiveKind kind) const;
  /// Prints one size's row and keeps both halves for the footer and JSON.
  void addRow(const Measurement& outOfPlace, const Measurement& inPlace);
  /// nccl-tests' footer: results with wrong values, and the mean busbw.
  void printFooter() const;

  /// Measurements whose check found wrong values.
  int failedResults() const;
  /// Writes every measurement to `path`; false with `*error` set on failure.
  bool writeJson(const std::string& path, std::string* error) const;

 private:
  const Options& options_;
  const int nranks_;
  const bool prints_;
  std::FILE* const out_;
  std::vector<Measurement> results_;
};

}  // namespace braid::perf
