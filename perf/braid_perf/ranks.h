// Cross-rank helpers for braid-perf, built on the public API only: combining
// per-rank times and error counts, barriers, and describing the ranks for the
// header. Failures come back as an Outcome carrying a sentence, never abort.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "braid.h"
#include "collective.h"
#include "options.h"

namespace braid::perf {

/// Success, or a sentence saying which call failed on which rank and why.
class [[nodiscard]] Outcome {
 public:
  static Outcome success() { return Outcome(""); }
  static Outcome failure(std::string message) { return Outcome(std::move(message)); }
  bool ok() const { return message_.empty(); }
  const std::string& message() const { return message_; }

 private:
  explicit Outcome(std::string message) : message_(std::move(message)) {}
  std::string message_;
};

/// Success for braidSuccess; otherwise a failure naming `call`, this rank, the
/// result code and the library's last error message.
Outcome checkCall(const char* call, braidResult_t result, const RankContext& context);

Outcome barrier(const RankContext& context);

/// Combines one value per rank as -a asks (rank 0's, average, min or max);
/// every rank receives the combined value.
Outcome combineAcrossRanks(const RankContext& context, TimeAggregation how, double* value);

/// Sums one count per rank; every rank receives the total.
Outcome sumAcrossRanks(const RankContext& context, int64_t* value);

/// One line per rank for the header: rank, pid, host, device.
Outcome describeRanks(const RankContext& context, std::vector<std::string>* lines);

}  // namespace braid::perf
