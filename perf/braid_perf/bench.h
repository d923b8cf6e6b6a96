// The measurement loop of braid-perf, following nccl-tests' BenchTime: for one
// (collective, type, op, root) it warms up at the largest and smallest size,
// then for each swept size and for out-of-place and in-place:
//
//   1. (with -c 1) write the input pattern;
//   2. one untimed call, then a barrier so that every rank starts together;
//   3. -n iterations of -m calls (one braidGroupStart/End per iteration when
//      -m > 1); time / (n * m) is this rank's time per operation;
//   4. combine the per-rank times as -a asks;
//   5. (with -c 1) poison the output, rewrite the input, call once more,
//      count wrong elements on every rank and sum the counts.
//
// With --memory device the buffers are CUDA device memory: inputs and poison are written to
// host mirrors and uploaded, results downloaded before counting, and each timed loop ends
// when the rank's stream has finished (calls on device buffers return once enqueued).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "braid.h"
#include "collective.h"
#include "data_check.h"
#include "options.h"
#include "ranks.h"

namespace braid::perf {

/// One row half of the table: a size measured out-of-place or in-place.
struct Measurement {
  CollectiveKind kind;
  size_t bytes;  // the size column, and the S of algbw
  size_t count;  // the count argument
  braidDataType_t type;
  std::optional<braidRedOp_t> op;  // nullopt for collectives that do not reduce
  int root;                        // -1 for collectives without a root
  bool inPlace;
  double seconds;                // per operation, combined across ranks per -a
  double algBw;                  // GB/s, GB = 1e9 bytes
  double busBw;                  // GB/s
  std::optional<int64_t> wrong;  // summed over ranks; nullopt when not checked
};

/// What one sweep is over.
struct SweepSpec {
  CollectiveKind kind;
  braidDataType_t type;
  braidRedOp_t op;
  int root;
};

class Bench {
 public:
  using RowCallback =
      std::function<void(const Measurement& outOfPlace, const Measurement& inPlace)>;

  /// `options` and `context` must outlive the Bench.
  Bench(const Options& options, const RankContext& context);
  ~Bench();

  /// Runs one sweep, calling `onRow` after each size (on every rank).
  Outcome runSweep(const SweepSpec& spec, const RowCallback& onRow);

 private:
  struct Buffers;
  /// Where one call's input and output start.
  struct Placement {
    char* send;
    char* recv;
  };

  Outcome warmUp(const SweepSpec& spec, size_t bytes);
  Outcome measure(const SweepSpec& spec, size_t bytes, bool inPlace, Measurement* result);
  Outcome timeIterations(const SweepSpec& spec, const CallArgs& args, double* seconds);
  Outcome checkOnce(const SweepSpec& spec, const CheckSpec& check, const Placement& place,
                    int64_t* wrong);
  Placement placement(const BufferLayout& layout, size_t elementBytes, bool inPlace) const;
  CallArgs callArgs(const SweepSpec& spec, const BufferLayout& layout,
                    const Placement& place) const;
  Outcome launch(const SweepSpec& spec, const CallArgs& args);

  // --memory device: buffers live on the GPU, calls are enqueued on context.stream.
  bool onDevice() const;
  /// The host copy of the bytes at `at` (a buffer pointer from placement()): the host
  /// mirror for device buffers, `at` itself for host buffers.
  char* hostView(char* at) const;
  /// Copies `bytes` at `at` from the host mirror to the device, or back (host: no-op).
  Outcome upload(char* at, size_t bytes);
  Outcome download(char* at, size_t bytes);
  /// Waits for the rank's enqueued device work (host: no-op, calls have completed).
  Outcome finish();
  Outcome withRank(const Outcome& outcome) const;

  const Options& options_;
  const RankContext& context_;
  std::unique_ptr<Buffers> buffers_;
};

}  // namespace braid::perf
