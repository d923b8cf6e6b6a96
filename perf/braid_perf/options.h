// Command-line options of braid-perf: nccl-tests' flags with nccl-tests'
// defaults, plus --memory, --algo and --proto.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "braid.h"
#include "collective.h"

namespace braid::perf {

/// How the per-rank times of one measurement are combined (nccl-tests' -a).
enum class TimeAggregation { kRank0 = 0, kAverage = 1, kMin = 2, kMax = 3 };

enum class MemoryKind { kHost, kDevice };

struct Options {
  std::vector<CollectiveKind> collectives;                  // one, or every kind for "all"
  size_t minBytes = 32u << 20;                              // -b
  size_t maxBytes = 32u << 20;                              // -e
  size_t stepBytes = 1u << 20;                              // -i, used when stepFactor == 1
  size_t stepFactor = 1;                                    // -f
  std::vector<braidRedOp_t> ops = {braidSum};               // -o (or "all")
  std::vector<braidDataType_t> types = {braidFloat32};      // -d (or "all")
  int root = 0;                                             // -r; kAllRoots sweeps every rank
  int iters = 20;                                           // -n
  int warmupIters = 5;                                      // -w
  int aggIters = 1;                                         // -m
  bool check = true;                                        // -c
  bool blocking = false;                                    // -z (host calls block anyway)
  TimeAggregation aggregation = TimeAggregation::kAverage;  // -a
  int timeoutSeconds = 0;                                   // -T; 0 keeps the library's default
  bool unaligned = false;                                   // -u
  std::string jsonPath;                                     // -J
  MemoryKind memory = MemoryKind::kHost;                    // --memory
  int threads = 1;    // -t: ranks in this process, one thread each (--memory device only)
  std::string algo;   // --algo -> BRAID_ALGO
  std::string proto;  // --proto -> BRAID_PROTO
  // Test hook, from BRAID_PERF_CORRUPT: this rank flips one output element
  // after each checked call, so that #wrong and the exit status must show it.
  int corruptRank = kNoRank;

  static constexpr int kNoRank = -1;

  static constexpr int kAllRoots = -1;
};

/// What parsing produced: options to run, a help text to print (then exit 0), or an error
/// sentence naming the offending flag (the caller exits 2).
struct ParseResult {
  std::optional<Options> options;
  std::string helpText;
  std::string error;
};

ParseResult parseOptions(int argc, char** argv);

/// Reads BRAID_PERF_CORRUPT into `options->corruptRank`; false with `*error`
/// set when it is set but not a rank number.
bool readTestHooks(Options* options, std::string* error);

/// Sizes the sweep visits, in order: min, then *factor or +step up to max.
std::vector<size_t> sweepSizes(const Options& options);

}  // namespace braid::perf
