// See options.h.
#include "options.h"

#include <optional>

#include "tools/cli/cli.h"

namespace braid::perf {
namespace {

// "1G", "64M", "8K" or plain bytes, 4 bytes to 1T; nothing when it is not such a count.
std::optional<size_t> parseBytes(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 13) return std::nullopt;  // no sign, no blanks, no overflow
  const std::string suffix = text.substr(digits);
  const int shift = suffix.empty()  ? 0
                    : suffix == "K" ? 10
                    : suffix == "M" ? 20
                    : suffix == "G" ? 30
                                    : -1;
  if (shift < 0) return std::nullopt;
  const size_t value = std::stoull(text.substr(0, digits)) << shift;  // < 10^13 * 2^30 < 2^64
  if (value < 4 || value > (size_t{1} << 40)) return std::nullopt;
  return value;
}

}  // namespace

const char* collectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "allreduce";
    case Collective::kAllGather:
      return "allgather";
    case Collective::kReduceScatter:
      return "reducescatter";
  }
  return "?";
}

std::optional<int> parseOptions(int argc, const char* const* argv, Options* o) {
  CLI::App app{
      "Times braid and NCCL in one process on one GPU, in the same loop: all-reduce, "
      "all-gather and reduce-scatter over a sweep of sizes, ranks sharing GPU 0.",
      "braid-nccl-compare"};
  app.set_help_flag("-h,--help", "print this help");
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::string minText = "8", maxText = "1G", layout = "auto";
  app.add_flag("--query", o->query, "print the device and NCCL, run nothing");
  app.add_option("--nccl", o->ncclPath, "libnccl.so.2 to open (default: the loader's search)")
      ->type_name("PATH");
  app.add_option("--ranks", o->ranks, "ranks sharing GPU 0, 2 to 64 (2)")
      ->type_name("N")
      ->check(CLI::Range(2, 64));  // kMaxRanks (shared_state.h)
  app.add_option("--layout", layout,
                 "ranks on threads of one process, one process each, or auto: threads, then "
                 "processes if NCCL refuses threads (auto)")
      ->type_name("auto|threads|processes")
      ->check(CLI::IsMember({"auto", "threads", "processes"}));
  app.add_option("--min", minText, "smallest size, bytes with K/M/G (8)")->type_name("BYTES");
  app.add_option("--max", maxText, "largest size, bytes with K/M/G (1G)")->type_name("BYTES");
  app.add_option("--factor", o->factor, "size multiplier per step, 2 to 1048576 (2)")
      ->type_name("F")
      ->check(CLI::Range(size_t{2}, size_t{1} << 20));
  app.add_option("--rounds", o->rounds, "braid/NCCL pairs per size; the median is kept (3)")
      ->type_name("R")
      ->check(CLI::Range(1, 1000));
  app.add_option("--deadline", o->deadlineSeconds,
                 "the watchdog ends the run after this many seconds, 1 to 86400 (140)")
      ->type_name("SECONDS")
      ->check(CLI::Range(1.0, 86400.0));
  app.add_option("--json", o->jsonPath, "also write the results here")->type_name("FILE");
  if (std::optional<int> exit = cli::parse(app, argc, argv)) return exit;
  const std::optional<size_t> minBytes = parseBytes(minText), maxBytes = parseBytes(maxText);
  std::string why;
  if (!minBytes) {
    why = "--min: expected bytes from 4 to 1024G (e.g. 8, 64K, 1G), got '" + minText + "'";
  } else if (!maxBytes) {
    why = "--max: expected bytes from 4 to 1024G (e.g. 8, 64K, 1G), got '" + maxText + "'";
  } else if (*minBytes > *maxBytes) {
    why = "--min " + minText + " is larger than --max " + maxText;
  }
  if (!why.empty()) {
    cli::usageError("braid-nccl-compare", why);
    return cli::kUsageError;
  }
  o->minBytes = *minBytes;
  o->maxBytes = *maxBytes;
  o->layout = layout == "threads"     ? Layout::kThreads
              : layout == "processes" ? Layout::kProcesses
                                      : Layout::kAuto;
  return std::nullopt;
}

}  // namespace braid::perf
