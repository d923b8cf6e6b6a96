/*
 * Command-line parsing for braid-train (see options.h).
 */
#include "train/options.h"

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <map>

#include "train/dataset.h"

namespace braid::train {
namespace {

Status parseLong(const std::string& flag, const std::string& text, long min, long max, long* out) {
  errno = 0;
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0) {
    return Status::error(flag + " wants an integer, got '" + text + "'");
  }
  if (value < min || value > max) {
    return Status::error(flag + " " + text + " is out of range " + std::to_string(min) + ".." +
                         std::to_string(max));
  }
  *out = value;
  return Status();
}

Status parseInt(const std::string& flag, const std::string& text, int min, int max, int* out) {
  long value = 0;
  TRAIN_RETURN_IF_ERROR(parseLong(flag, text, min, max, &value));
  *out = static_cast<int>(value);
  return Status();
}

Status parseFloat(const std::string& flag, const std::string& text, float min, float max,
                  float* out) {
  errno = 0;
  char* end = nullptr;
  float value = std::strtof(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !(value >= min && value <= max)) {
    return Status::error(flag + " wants a number in [" + std::to_string(min) + ", " +
                         std::to_string(max) + "], got '" + text + "'");
  }
  *out = value;
  return Status();
}

template <typename T>
Status parseChoice(const std::string& flag, const std::string& text,
                   const std::map<std::string, T>& choices, T* out) {
  auto found = choices.find(text);
  if (found != choices.end()) {
    *out = found->second;
    return Status();
  }
  std::string names;
  for (const auto& [name, value] : choices) names += (names.empty() ? "" : "|") + name;
  return Status::error(flag + " must be one of " + names + ", got '" + text + "'");
}

}  // namespace

std::string usage() {
  return R"(usage: braid-train [options]    (under braidrun -n N or mpirun -np N, N = dp*pp*tp)

parallelism
  --dp N --pp N --tp N        data, pipeline, tensor parallel degrees (1)
  --micro M                   micro-batches per replica per step (1): gradient
                              accumulation, and the pipeline's M
  --schedule gpipe|1f1b       pipeline schedule (1f1b)
  --dp-mode ring|ps           all-reduce gradients, or reduce/update/broadcast at replica 0 (ring)
  --bucket-mb X               gradient bucket size in MiB (4)
  --no-overlap                exchange gradients after backward instead of during it
  --precision fp32|bf16|fp16  precision of the gradient exchange (fp32); fp16 scales the loss
  --loss-scale X --loss-scale-window N   fp16: initial scale (65536); doubled after N
                              steps without overflow (1000), halved (and the step skipped) on one
model and training
  --hidden N --hidden-layers N   MLP 784 -> N x layers -> 10 (1024, 3)
  --epochs N --steps N        stop after N epochs (1) or N steps, whichever is first
  --batch N                   global batch size (128)
  --optimizer sgd|adam|lamb   (adam)   --lr X (sgd 0.05, adam 0.001, lamb 0.01)
  --momentum X --weight-decay X --lr-schedule constant|cosine --warmup N
  --seed N                    initial weights and data order (1)
data and output
  --data DIR                  Fashion-MNIST idx .gz files (/usr/share/datasets/fashion-mnist)
  --eval-limit N              evaluate on the first N test images (all)
  --csv FILE                  the loss curve as CSV, one row per step
  --plot FILE                 that CSV drawn as a PNG (needs --csv, and matplotlib in
                              $BRAID_PYTHON, default python3: build/venv after make test)
  --log-every N --quiet --help
)";
}

Status parseOptions(const std::vector<std::string>& args, Options* out) {
  Options o;
  std::string optimizerName;
  using Handler = std::function<Status(const std::string&, const std::string&)>;
  const std::map<std::string, Handler> valued = {
      {"--dp", [&](auto& f, auto& v) { return parseInt(f, v, 1, 4096, &o.grid.dp); }},
      {"--pp", [&](auto& f, auto& v) { return parseInt(f, v, 1, 4096, &o.grid.pp); }},
      {"--tp", [&](auto& f, auto& v) { return parseInt(f, v, 1, 4096, &o.grid.tp); }},
      {"--micro", [&](auto& f, auto& v) { return parseInt(f, v, 1, 1 << 20, &o.micro); }},
      {"--hidden", [&](auto& f, auto& v) { return parseInt(f, v, 1, 1 << 16, &o.model.hidden); }},
      {"--hidden-layers",
       [&](auto& f, auto& v) { return parseInt(f, v, 1, 64, &o.model.hiddenLayers); }},
      {"--epochs", [&](auto& f, auto& v) { return parseInt(f, v, 1, 100000, &o.epochs); }},
      {"--steps", [&](auto& f, auto& v) { return parseLong(f, v, 1, 1L << 40, &o.maxSteps); }},
      {"--batch", [&](auto& f, auto& v) { return parseInt(f, v, 1, 60000, &o.batch); }},
      {"--lr", [&](auto& f, auto& v) { return parseFloat(f, v, 0.0f, 100.0f, &o.lr); }},
      {"--momentum",
       [&](auto& f, auto& v) { return parseFloat(f, v, 0.0f, 0.999f, &o.optimizer.momentum); }},
      {"--weight-decay",
       [&](auto& f, auto& v) { return parseFloat(f, v, 0.0f, 1.0f, &o.optimizer.weightDecay); }},
      {"--warmup", [&](auto& f, auto& v) { return parseInt(f, v, 0, 1 << 30, &o.warmupSteps); }},
      {"--seed",
       [&](auto& f, auto& v) {
         long seed = 0;
         TRAIN_RETURN_IF_ERROR(parseLong(f, v, 0, 1L << 62, &seed));
         o.seed = static_cast<uint64_t>(seed);
         return Status();
       }},
      {"--bucket-mb",
       [&](auto& f, auto& v) {
         float mb = 0;
         TRAIN_RETURN_IF_ERROR(parseFloat(f, v, 0.0001f, 4096.0f, &mb));
         o.sync.bucketBytes = static_cast<size_t>(mb * 1048576.0f);
         return Status();
       }},
      {"--eval-limit", [&](auto& f, auto& v) { return parseInt(f, v, 0, 1 << 30, &o.evalLimit); }},
      {"--loss-scale",
       [&](auto& f, auto& v) { return parseFloat(f, v, 1.0f, 1e30f, &o.initialLossScale); }},
      {"--loss-scale-window",
       [&](auto& f, auto& v) { return parseInt(f, v, 1, 1 << 30, &o.lossScaleWindow); }},
      {"--log-every", [&](auto& f, auto& v) { return parseInt(f, v, 1, 1 << 30, &o.logEvery); }},
      {"--data",
       [&](auto&, auto& v) {
         o.dataDir = v;
         return Status();
       }},
      {"--csv",
       [&](auto&, auto& v) {
         o.csvPath = v;
         return Status();
       }},
      {"--plot",
       [&](auto&, auto& v) {
         o.plotPath = v;
         return Status();
       }},
      {"--schedule",
       [&](auto& f, auto& v) {
         return parseChoice<Schedule>(
             f, v, {{"gpipe", Schedule::kGpipe}, {"1f1b", Schedule::kOneFOneB}}, &o.schedule);
       }},
      {"--dp-mode",
       [&](auto& f, auto& v) {
         return parseChoice<DpMode>(
             f, v, {{"ring", DpMode::kRing}, {"ps", DpMode::kParameterServer}}, &o.sync.mode);
       }},
      {"--precision",
       [&](auto& f, auto& v) {
         return parseChoice<Precision>(
             f, v,
             {{"fp32", Precision::kFp32}, {"bf16", Precision::kBf16}, {"fp16", Precision::kFp16}},
             &o.sync.precision);
       }},
      {"--optimizer",
       [&](auto& f, auto& v) {
         return parseChoice<OptimizerKind>(f, v,
                                           {{"sgd", OptimizerKind::kSgd},
                                            {"adam", OptimizerKind::kAdam},
                                            {"lamb", OptimizerKind::kLamb}},
                                           &o.optimizer.kind);
       }},
      {"--lr-schedule",
       [&](auto& f, auto& v) {
         return parseChoice<LrSchedule>(
             f, v, {{"constant", LrSchedule::kConstant}, {"cosine", LrSchedule::kCosine}},
             &o.lrSchedule);
       }},
  };
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i], value;
    bool inlineValue = false;
    if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      inlineValue = true;
    }
    if (flag == "--help" || flag == "-h") {
      o.help = true;
    } else if (flag == "--quiet") {
      o.quiet = true;
    } else if (flag == "--no-overlap") {
      o.sync.overlap = false;
    } else if (auto handler = valued.find(flag); handler != valued.end()) {
      if (!inlineValue) {
        if (i + 1 >= args.size()) return Status::error(flag + " needs a value");
        value = args[++i];
      }
      TRAIN_RETURN_IF_ERROR(handler->second(flag, value));
    } else {
      return Status::error("unknown argument '" + args[i] + "' (see --help)");
    }
  }
  if (!o.plotPath.empty() && o.csvPath.empty()) {
    return Status::error("--plot draws the table that --csv writes: give --csv FILE too");
  }
  if (o.lr < 0) {
    o.lr = o.optimizer.kind == OptimizerKind::kSgd    ? 0.05f
           : o.optimizer.kind == OptimizerKind::kAdam ? 0.001f
                                                      : 0.01f;
  }
  if (o.batch < o.grid.dp * o.micro) {
    return Status::error("--batch " + std::to_string(o.batch) + " is smaller than --dp " +
                         std::to_string(o.grid.dp) + " × --micro " + std::to_string(o.micro) +
                         ": some micro-batch would be empty");
  }
  int layers = o.model.hiddenLayers + 1;
  if (o.grid.pp > layers) {
    return Status::error("--pp " + std::to_string(o.grid.pp) + " exceeds the model's " +
                         std::to_string(layers) + " layers (raise --hidden-layers)");
  }
  if (o.grid.tp > o.model.hidden || o.grid.tp > kClasses) {
    return Status::error("--tp " + std::to_string(o.grid.tp) +
                         " exceeds the hidden width or the 10 classes it would split");
  }
  *out = o;
  return Status();
}

}  // namespace braid::train
