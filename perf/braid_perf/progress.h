// A one-line progress indicator on stderr for long sweeps:
//
//   [allreduce float sum 1048576 B] 12/40
//
// rewritten in place after every row ('\r'), and erased when the run ends, so
// the table on stdout stays untouched. It is shown only on rank 0 and only when
// stderr is a terminal: logs and pipes (ctest, CI, `2>file`) never see it.
#pragma once

#include <cstddef>
#include <cstdio>

#include "bench.h"

namespace braid::perf {

class Progress {
 public:
  /// `totalRows` is the number of rows the whole run prints.
  Progress(bool isRankZero, size_t totalRows);
  ~Progress();

  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Counts one more finished row, described by its out-of-place half.
  void rowDone(const Measurement& row);
  /// Erases the line (also done by the destructor).
  void finish();

 private:
  std::FILE* const out_;  // nullptr when the line is suppressed
  const size_t totalRows_;
  size_t doneRows_ = 0;
  bool showing_ = false;
};

}  // namespace braid::perf
