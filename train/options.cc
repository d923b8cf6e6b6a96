/*
 * Command-line parsing for braid-train (see options.h).
 */
#include "train/options.h"

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>

#include "tools/cli/cli.h"
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

// One option that takes a value: CLI11 collects its text, `set` checks and stores it (so that
// each refusal says what the option wants, in one sentence).
struct Valued {
  const char* flag;
  const char* valueName;
  const char* help;
  std::function<Status(const std::string& flag, const std::string& value)> set;
};

constexpr const char* kUsage =
    "usage: braid-train [options]    (under braidrun -n N or mpirun -np N, N = dp*pp*tp)";

constexpr const char* kDescription =
    "Trains an MLP on Fashion-MNIST with data, pipeline and tensor parallelism over braid.";

using OptionGroups = std::vector<std::pair<const char*, std::vector<Valued>>>;

// The options' table, writing into `o`; groups as the help shows them.
OptionGroups valuedOptions(Options& o) {
  const char* parallelism = "Parallelism";
  const char* training = "Model and training";
  const char* output = "Data and output";
  return {
      {parallelism,
       {
           {"--dp", "N", "data parallel degree (1)",
            [&](auto& f, auto& v) { return parseInt(f, v, 1, 4096, &o.grid.dp); }},
           {"--pp", "N", "pipeline parallel degree (1)",
            [&](auto& f, auto& v) { return parseInt(f, v, 1, 4096, &o.grid.pp); }},
           {"--tp", "N", "tensor parallel degree (1)",
            [&](auto& f, auto& v) { return parseInt(f, v, 1, 4096, &o.grid.tp); }},
           {"--micro", "M",
            "micro-batches per replica per step (1): gradient accumulation, and the pipeline's M",
            [&](auto& f, auto& v) { return parseInt(f, v, 1, 1 << 20, &o.micro); }},
           {"--schedule", "gpipe|1f1b", "pipeline schedule (1f1b)",
            [&](auto& f, auto& v) {
              return parseChoice<Schedule>(
                  f, v, {{"gpipe", Schedule::kGpipe}, {"1f1b", Schedule::kOneFOneB}}, &o.schedule);
            }},
           {"--dp-mode", "ring|ps",
            "all-reduce gradients, or reduce/update/broadcast at replica 0 (ring)",
            [&](auto& f, auto& v) {
              return parseChoice<DpMode>(
                  f, v, {{"ring", DpMode::kRing}, {"ps", DpMode::kParameterServer}}, &o.sync.mode);
            }},
           {"--bucket-mb", "X", "gradient bucket size in MiB (4)",
            [&](auto& f, auto& v) {
              float mb = 0;
              TRAIN_RETURN_IF_ERROR(parseFloat(f, v, 0.0001f, 4096.0f, &mb));
              o.sync.bucketBytes = static_cast<size_t>(mb * 1048576.0f);
              return Status();
            }},
           {"--precision", "fp32|bf16|fp16",
            "precision of the gradient exchange (fp32); fp16 scales the loss",
            [&](auto& f, auto& v) {
              return parseChoice<Precision>(f, v,
                                            {{"fp32", Precision::kFp32},
                                             {"bf16", Precision::kBf16},
                                             {"fp16", Precision::kFp16}},
                                            &o.sync.precision);
            }},
           {"--loss-scale", "X", "fp16: initial loss scale (65536)",
            [&](auto& f, auto& v) { return parseFloat(f, v, 1.0f, 1e30f, &o.initialLossScale); }},
           {"--loss-scale-window", "N",
            "fp16: the scale doubles after N steps without overflow (1000) and halves (the step "
            "skipped) on one",
            [&](auto& f, auto& v) { return parseInt(f, v, 1, 1 << 30, &o.lossScaleWindow); }},
       }},
      {training,
       {
           {"--hidden", "N", "MLP 784 -> N x layers -> 10: the width N (1024)",
            [&](auto& f, auto& v) { return parseInt(f, v, 1, 1 << 16, &o.model.hidden); }},
           {"--hidden-layers", "N", "the hidden layers (3)",
            [&](auto& f, auto& v) { return parseInt(f, v, 1, 64, &o.model.hiddenLayers); }},
           {"--epochs", "N", "stop after N epochs (1) or --steps, whichever is first",
            [&](auto& f, auto& v) { return parseInt(f, v, 1, 100000, &o.epochs); }},
           {"--steps", "N", "stop after N steps",
            [&](auto& f, auto& v) { return parseLong(f, v, 1, 1L << 40, &o.maxSteps); }},
           {"--batch", "N", "global batch size (128)",
            [&](auto& f, auto& v) { return parseInt(f, v, 1, 60000, &o.batch); }},
           {"--optimizer", "sgd|adam|lamb", "(adam)",
            [&](auto& f, auto& v) {
              return parseChoice<OptimizerKind>(f, v,
                                                {{"sgd", OptimizerKind::kSgd},
                                                 {"adam", OptimizerKind::kAdam},
                                                 {"lamb", OptimizerKind::kLamb}},
                                                &o.optimizer.kind);
            }},
           {"--lr", "X", "learning rate (sgd 0.05, adam 0.001, lamb 0.01)",
            [&](auto& f, auto& v) { return parseFloat(f, v, 0.0f, 100.0f, &o.lr); }},
           {"--momentum", "X", "SGD momentum (0.9)",
            [&](auto& f, auto& v) {
              return parseFloat(f, v, 0.0f, 0.999f, &o.optimizer.momentum);
            }},
           {"--weight-decay", "X", "(0)",
            [&](auto& f, auto& v) {
              return parseFloat(f, v, 0.0f, 1.0f, &o.optimizer.weightDecay);
            }},
           {"--lr-schedule", "constant|cosine", "(constant)",
            [&](auto& f, auto& v) {
              return parseChoice<LrSchedule>(
                  f, v, {{"constant", LrSchedule::kConstant}, {"cosine", LrSchedule::kCosine}},
                  &o.lrSchedule);
            }},
           {"--warmup", "N", "steps of linear learning-rate warm-up (0)",
            [&](auto& f, auto& v) { return parseInt(f, v, 0, 1 << 30, &o.warmupSteps); }},
           {"--seed", "N", "initial weights and data order (1)",
            [&](auto& f, auto& v) {
              long seed = 0;
              TRAIN_RETURN_IF_ERROR(parseLong(f, v, 0, 1L << 62, &seed));
              o.seed = static_cast<uint64_t>(seed);
              return Status();
            }},
       }},
      {output,
       {
           {"--data", "DIR", "Fashion-MNIST idx .gz files (/usr/share/datasets/fashion-mnist)",
            [&](auto&, auto& v) {
              o.dataDir = v;
              return Status();
            }},
           {"--eval-limit", "N", "evaluate on the first N test images (all)",
            [&](auto& f, auto& v) { return parseInt(f, v, 0, 1 << 30, &o.evalLimit); }},
           {"--csv", "FILE", "the loss curve as CSV, one row per step",
            [&](auto&, auto& v) {
              o.csvPath = v;
              return Status();
            }},
           {"--plot", "FILE",
            "that CSV drawn as a PNG (needs --csv, and matplotlib in $BRAID_PYTHON, default "
            "python3: build/venv after make test)",
            [&](auto&, auto& v) {
              o.plotPath = v;
              return Status();
            }},
           {"--log-every", "N", "steps between progress lines when stdout is not a terminal (50)",
            [&](auto& f, auto& v) { return parseInt(f, v, 1, 1 << 30, &o.logEvery); }},
       }},
  };
}

// The CLI11 application: each valued option's text lands in `texts` and its CLI11 option in
// `given`, both in the table's order.
std::unique_ptr<CLI::App> makeApp(const OptionGroups& groups, Options& o,
                                  std::vector<std::string>* texts,
                                  std::vector<CLI::Option*>* given) {
  auto app = std::make_unique<CLI::App>(kDescription, "braid-train");
  cli::setUsage(*app, kUsage);
  app->set_help_flag("-h,--help", "print this help");
  // A repeated option takes its last value.
  app->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  size_t count = 0;
  for (const auto& [group, options] : groups) count += options.size();
  texts->assign(count, "");  // no reallocation below: CLI11 keeps pointers into it
  given->clear();
  for (const auto& [group, options] : groups) {
    for (const Valued& v : options) {
      given->push_back(app->add_option(v.flag, (*texts)[given->size()], v.help)
                           ->type_name(v.valueName)
                           ->group(group));
    }
  }
  app->add_flag_callback(
         "--no-overlap", [&o] { o.sync.overlap = false; },
         "exchange gradients after backward instead of during it")
      ->group(groups[0].first);
  app->add_flag("--quiet", o.quiet, "no progress lines")->group(groups[2].first);
  return app;
}

// CLI11 reads a missing value as a mismatch in counts; say it as before: "--dp needs a value".
Status checkLastHasValue(const CLI::App& app, const std::vector<std::string>& args) {
  if (args.empty()) return Status();
  const std::string& last = args.back();
  const CLI::Option* option = app.get_option_no_throw(last);
  if (option != nullptr && option->get_expected_min() > 0) {
    return Status::error(last + " needs a value");
  }
  return Status();
}

}  // namespace

std::string usage() {
  Options o;
  const OptionGroups groups = valuedOptions(o);
  std::vector<std::string> texts;
  std::vector<CLI::Option*> given;
  return makeApp(groups, o, &texts, &given)->help();
}

Status parseOptions(const std::vector<std::string>& args, Options* out) {
  Options o;
  const OptionGroups groups = valuedOptions(o);
  std::vector<std::string> texts;
  std::vector<CLI::Option*> given;
  std::unique_ptr<CLI::App> app = makeApp(groups, o, &texts, &given);
  TRAIN_RETURN_IF_ERROR(checkLastHasValue(*app, args));
  try {
    app->parse(std::vector<std::string>(args.rbegin(), args.rend()));
  } catch (const CLI::CallForHelp&) {
    out->help = true;
    return Status();
  } catch (const CLI::ExtrasError&) {
    return Status::error("unknown argument '" + app->remaining().front() + "'");
  } catch (const CLI::ParseError& e) {
    return Status::error(e.what());
  }
  size_t i = 0;
  for (const auto& [group, options] : groups) {
    for (const Valued& v : options) {
      if (given[i]->count() > 0) TRAIN_RETURN_IF_ERROR(v.set(v.flag, texts[i]));
      ++i;
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
