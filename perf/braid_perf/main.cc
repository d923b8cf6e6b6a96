// braid-perf: an nccl-tests-compatible bandwidth sweep over braid's public API.
//
//   braidrun -n 4 -- braid-perf allreduce -b 8 -e 128M -f 2
//   braid-perf allreduce --memory device -t 4 -b 8 -e 128M -f 2
//
// Host memory: each process is one rank and joins through braidCommInitFromEnv, or, built
// with MPI and started by mpirun/mpiexec, through MPI (tools/mpi_launch: no BRAID_* needed).
// Device memory: one process holds -t ranks on one GPU (device_ranks.h). Exit
// status: 0 when every check passed, 1 when a result was wrong or a call
// failed (or no GPU), 2 for a bad command line.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench.h"
#include "braid.h"
#include "device_ranks.h"
#include "mpi_launch.h"
#include "options.h"
#include "progress.h"
#include "ranks.h"
#include "report.h"

namespace braid::perf {
namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int usageError(const std::string& message) {
  std::fprintf(stderr, "braid-perf: %s\n", message.c_str());
  return kExitUsage;
}

// Library settings must be in the environment before the communicator exists.
void exportSettings(const Options& options) {
  if (!options.algo.empty()) setenv("BRAID_ALGO", options.algo.c_str(), 1);
  if (!options.proto.empty()) setenv("BRAID_PROTO", options.proto.c_str(), 1);
  if (options.timeoutSeconds > 0) {
    setenv("BRAID_TIMEOUT", std::to_string(options.timeoutSeconds).c_str(), 1);
  }
}

bool hasRootedCollective(const Options& options) {
  for (CollectiveKind kind : options.collectives) {
    if (collectiveInfo(kind).rooted) return true;
  }
  return false;
}

// Every (type, op, root) of every collective, in nccl-tests' order.
std::vector<SweepSpec> sweepsOf(const Options& options, CollectiveKind kind, int nranks) {
  const CollectiveInfo& info = collectiveInfo(kind);
  const std::vector<braidRedOp_t> noOp = {braidSum};
  std::vector<int> roots = {info.rooted ? options.root : -1};
  if (info.rooted && options.root == Options::kAllRoots) {
    roots.clear();
    for (int root = 0; root < nranks; ++root) roots.push_back(root);
  }
  std::vector<SweepSpec> sweeps;
  for (braidDataType_t type : options.types) {
    for (braidRedOp_t op : info.reduces ? options.ops : noOp) {
      for (int root : roots) sweeps.push_back(SweepSpec{kind, type, op, root});
    }
  }
  return sweeps;
}

Outcome runAll(const Options& options, const RankContext& context, Report* report) {
  std::vector<std::string> rankLines;
  Outcome outcome = describeRanks(context, &rankLines);
  if (!outcome.ok()) return outcome;
  report->printHeader(rankLines);
  size_t totalRows = 0;
  for (CollectiveKind kind : options.collectives) {
    totalRows += sweepsOf(options, kind, context.nranks).size() * sweepSizes(options).size();
  }
  Progress progress(/*isRankZero=*/context.rank == 0, totalRows);
  Bench bench(options, context);
  for (CollectiveKind kind : options.collectives) {
    report->printColumns(kind);
    for (const SweepSpec& sweep : sweepsOf(options, kind, context.nranks)) {
      outcome = bench.runSweep(
          sweep, [report, &progress](const Measurement& outOfPlace, const Measurement& inPlace) {
            report->addRow(outOfPlace, inPlace);
            progress.rowDone(outOfPlace);
          });
      if (!outcome.ok()) return outcome;
    }
  }
  progress.finish();
  report->printFooter();
  return Outcome::success();
}

// Rank 0's JSON file (-J), and its table flushed; false if the file failed.
bool writeOutputs(const Options& options, const RankContext& context, const Report& report) {
  if (context.rank != 0) return true;
  std::fflush(stdout);
  if (options.jsonPath.empty()) return true;
  std::string error;
  if (report.writeJson(options.jsonPath, &error)) return true;
  std::fprintf(stderr, "braid-perf: %s\n", error.c_str());
  return false;
}

// One rank's whole run on a communicator it owns: sweeps, outputs, then finalize and
// destroy; after a failure, abort (so that peers fail fast) and leave the rest to exit.
int runRank(const Options& options, const RankContext& context) {
  Report report(options, context.nranks, /*prints=*/context.rank == 0, stdout);
  Outcome outcome = runAll(options, context, &report);
  int status = report.failedResults() > 0 ? kExitFailure : 0;
  if (outcome.ok()) {
    if (!writeOutputs(options, context, report)) status = kExitFailure;
    // braidrun stops every rank as soon as one exits non-zero (as after a
    // failed check): no rank leaves before rank 0 has written everything.
    outcome = barrier(context);
  }
  if (!outcome.ok()) {
    std::fprintf(stderr, "braid-perf: %s\n", outcome.message().c_str());
    // Peers may be waiting on this rank: abort so that they fail fast, not time out.
    braidCommAbort(context.comm);
    writeOutputs(options, context, report);  // whatever was measured before the failure
    return kExitFailure;
  }
  braidCommFinalize(context.comm);
  braidCommDestroy(context.comm);
  return status;
}

// Empty, or why -r does not name a rank of an n-rank run.
std::string rootError(const Options& options, int nranks) {
  if (!hasRootedCollective(options) || options.root == Options::kAllRoots ||
      options.root < nranks) {
    return "";
  }
  return "-r/--root: root " + std::to_string(options.root) + " is not a rank of this " +
         std::to_string(nranks) + "-rank run";
}

int run(int argc, char** argv) {
  const ParseResult parsed = parseOptions(argc, argv);
  if (parsed.helpRequested) {
    std::fputs(usageText("braid-perf").c_str(), stdout);
    return 0;
  }
  if (!parsed.options) return usageError(parsed.error + " (try --help)");
  Options options = *parsed.options;
  std::string hookError;
  if (!readTestHooks(&options, &hookError)) return usageError(hookError);
  exportSettings(options);
  if (options.memory == MemoryKind::kDevice) {
    const std::string badRoot = rootError(options, options.threads);
    if (!badRoot.empty()) return usageError(badRoot);
    return runDeviceRanks(
        options, [&options](const RankContext& context) { return runRank(options, context); });
  }
  if (options.threads != 1) {
    return usageError("-t/--nthreads " + std::to_string(options.threads) +
                      ": several ranks per process need --memory device (one GPU); with host "
                      "memory start more ranks with braidrun -n");
  }

  RankContext context{nullptr, 0, 1};
  std::string joinError;
  if (launch::joinWorld(&argc, &argv, &context.comm, &joinError) != braidSuccess) {
    std::fprintf(stderr, "braid-perf: %s\n", joinError.c_str());
    return kExitFailure;
  }
  if (braidCommUserRank(context.comm, &context.rank) != braidSuccess ||
      braidCommCount(context.comm, &context.nranks) != braidSuccess) {
    std::fprintf(stderr, "braid-perf: cannot read rank and size of the communicator\n");
    braidCommDestroy(context.comm);
    return kExitFailure;
  }
  const std::string badRoot = rootError(options, context.nranks);
  if (!badRoot.empty()) {
    braidCommDestroy(context.comm);
    return usageError(badRoot);
  }
  return runRank(options, context);
}

}  // namespace
}  // namespace braid::perf

int main(int argc, char** argv) {
  int status = braid::perf::run(argc, argv);
  braid::launch::leaveWorld();  // MPI_Finalize, when the ranks joined through MPI
  return status;
}
