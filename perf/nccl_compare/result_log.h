// braid-nccl-compare's results: a printed table, row by row as measured, and the JSON file,
// written at the end or by the watchdog when a library hangs (so a hang never loses the rows
// already measured).
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "options.h"

namespace braid::perf {

class ResultLog {
 public:
  /// `layout` ("threads", "processes") goes into the header and the JSON; a `quiet` log
  /// (ranks other than 0 in their own processes) prints no header.
  ResultLog(const Options& options, std::string ncclVersion, std::string ncclPath,
            std::string layout, bool quiet = false);

  /// One size of one collective: seconds per call (slowest rank) of each library; 0 = did
  /// not run.
  void row(Collective c, size_t bytes, double braidSeconds, double ncclSeconds);
  /// NCCL cannot take part, and why (kept for the JSON, printed once).
  void ncclUnavailable(const std::string& why);
  /// braid failed (printed, kept for the JSON).
  void fail(const std::string& why);
  /// Starts a thread that writes the JSON and ends the process (exit 4) after `seconds`.
  void startWatchdog(double seconds);
  /// Writes the JSON (--json), once.
  void finish();

 private:
  struct Row {
    Collective c;
    size_t bytes;
    double braidSeconds, ncclSeconds;
  };
  void writeJsonLocked(const char* ending);

  const Options& options_;
  const std::string ncclVersion_, ncclPath_, layout_;
  std::mutex mu_;
  std::vector<Row> rows_;
  std::string ncclError_, braidError_;
  bool written_ = false;
};

}  // namespace braid::perf
