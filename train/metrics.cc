/*
 * CSV output, the timing table and the plot hand-off (see metrics.h).
 */
#include "train/metrics.h"

#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace braid::train {
namespace {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

// Output files usually go to a folder that is git-ignored (train/results/) and
// may not exist in a fresh checkout, so create the parent folders first.
Status makeParentDirectories(const std::string& flag, const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return Status();
  std::error_code error;
  std::filesystem::create_directories(parent, error);
  if (error) {
    return Status::error(flag + " " + path + ": cannot create folder " + parent.string() + " (" +
                         error.message() + ")");
  }
  return Status();
}

// Columns of the per-rank summary gathered to rank 0, all medians over steps.
enum Column { kStep, kPipeline, kCompute, kTp, kPp, kDpExposed, kDpBusy, kBubble, kLive, kColumns };

}  // namespace

CsvWriter::~CsvWriter() { close(); }

void CsvWriter::close() {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

Status CsvWriter::open(const std::string& path) {
  Status made = makeParentDirectories("--csv", path);
  if (!made.ok()) return made;
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) {
    return Status::error("--csv " + path + ": cannot create (" + std::strerror(errno) + ")");
  }
  std::fprintf(file_,
               "step,epoch,samples,lr,loss,loss_scale,skipped,step_ms,compute_ms,tp_ms,pp_ms,"
               "dp_ms,eval_loss,eval_accuracy\n");
  return Status();
}

void CsvWriter::write(const StepRecord& r) {
  if (file_ == nullptr) return;
  std::fprintf(file_, "%ld,%d,%ld,%.6g,%.9g,%.9g,%d,%.3f,%.3f,%.3f,%.3f,%.3f,", r.step, r.epoch,
               r.samples, r.lr, r.loss, r.lossScale, r.skipped ? 1 : 0, 1e3 * r.seconds,
               1e3 * r.times.compute, 1e3 * r.times.tp, 1e3 * r.times.pp, 1e3 * r.times.dp);
  if (r.evaluated) {
    std::fprintf(file_, "%.9g,%.6f\n", r.evalLoss, r.evalAccuracy);
  } else {
    std::fprintf(file_, ",\n");
  }
  std::fflush(file_);
}

Status reportTiming(const std::vector<StepRecord>& records, Grid& grid, int micro) {
  // The first steps warm caches and connections: leave them out when there are enough.
  size_t skip = records.size() > 4 ? 2 : 0;
  std::vector<std::vector<double>> columns(kColumns);
  for (size_t i = skip; i < records.size(); ++i) {
    const StepRecord& r = records[i];
    columns[kStep].push_back(r.seconds);
    columns[kPipeline].push_back(r.pipelineSeconds);
    columns[kCompute].push_back(r.times.compute);
    columns[kTp].push_back(r.times.tp);
    columns[kPp].push_back(r.times.pp);
    columns[kDpExposed].push_back(r.times.dp);
    columns[kDpBusy].push_back(r.dpBusySeconds);
    columns[kBubble].push_back(r.pipelineSeconds > 0 ? r.times.pp / r.pipelineSeconds : 0);
    columns[kLive].push_back(r.peakLive);
  }
  float mine[kColumns];
  for (int c = 0; c < kColumns; ++c) mine[c] = static_cast<float>(median(columns[c]));
  const int ranks = grid.shape().size();
  std::vector<float> all(static_cast<size_t>(kColumns) * ranks);
  if (ranks > 1) {
    TRAIN_RETURN_IF_ERROR(
        checkBraid(braidGather(mine, all.data(), kColumns, braidFloat32, 0, grid.world(), nullptr),
                   grid.world(), "gathering the timing medians"));
  } else {
    std::copy(mine, mine + kColumns, all.begin());
  }
  if (grid.worldRank() != 0) return Status();
  const GridShape& shape = grid.shape();
  std::printf("timing, medians over %zu steps (ms; comm%% = (tp + pp + dp exposed) / step):\n",
              records.size() - skip);
  std::printf(
      "rank  dp pp tp     step  compute       tp       pp  dp-wait  dp-busy  comm%%  "
      "bubble  live\n");
  int busiest = 0;
  for (int r = 0; r < ranks; ++r) {
    const float* v = &all[static_cast<size_t>(r) * kColumns];
    if (v[kCompute] > all[static_cast<size_t>(busiest) * kColumns + kCompute]) busiest = r;
    double comm = v[kStep] > 0 ? (v[kTp] + v[kPp] + v[kDpExposed]) / v[kStep] : 0;
    std::printf("%4d  %2d %2d %2d %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %5.1f%% %6.3f %5d\n", r,
                r / (shape.tp * shape.pp), (r / shape.tp) % shape.pp, r % shape.tp, 1e3 * v[kStep],
                1e3 * v[kCompute], 1e3 * v[kTp], 1e3 * v[kPp], 1e3 * v[kDpExposed],
                1e3 * v[kDpBusy], 100 * comm, v[kBubble], static_cast<int>(v[kLive]));
  }
  if (shape.pp > 1) {
    double theory = double(shape.pp - 1) / (micro + shape.pp - 1);
    std::printf(
        "pipeline bubble of the busiest stage (rank %d): measured %.3f, "
        "(p-1)/(m+p-1) = %.3f for p=%d m=%d\n",
        busiest, all[static_cast<size_t>(busiest) * kColumns + kBubble], theory, shape.pp, micro);
  }
  std::fflush(stdout);
  return Status();
}

Status plotCsv(const std::string& csvPath, const std::string& pngPath) {
  std::string command = std::string("python3 '") + BRAID_TRAIN_PLOT_SCRIPT + "' '" + csvPath +
                        "' -o '" + pngPath + "'";
  if (csvPath.find('\'') != std::string::npos || pngPath.find('\'') != std::string::npos) {
    return Status::error("--plot/--csv paths must not contain a single quote");
  }
  Status made = makeParentDirectories("--plot", pngPath);
  if (!made.ok()) return made;
  int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::error("plotting " + csvPath + " into " + pngPath + " failed (" + command + ")");
  }
  return Status();
}

}  // namespace braid::train
