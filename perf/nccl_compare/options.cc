// See options.h.
#include "options.h"

#include <cstdlib>
#include <optional>

namespace braid::perf {
namespace {

// "1G", "64M", "8K" or plain bytes.
std::optional<size_t> parseBytes(const std::string& text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) return std::nullopt;
  const std::string suffix = end;
  if (suffix.empty()) return value;
  if (suffix == "K") return value << 10;
  if (suffix == "M") return value << 20;
  if (suffix == "G") return value << 30;
  return std::nullopt;
}

std::optional<long> parseInt(const std::string& text, long lo, long hi) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || value < lo || value > hi) return std::nullopt;
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

const char* usage() {
  return "usage: braid-nccl-compare [--query] [--nccl PATH] [--ranks N] [--min BYTES]\n"
         "         [--max BYTES] [--factor F] [--rounds R] [--deadline SECONDS] [--json FILE]\n"
         "         [--layout auto|threads|processes]\n";
}

std::string parseOptions(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--query") {
      o->query = true;
      continue;
    }
    if (i + 1 >= argc) return "unknown argument, or one without its value: '" + arg + "'";
    const std::string value = argv[++i];
    auto bad = [&] { return arg + ": bad value '" + value + "'"; };
    if (arg == "--nccl") {
      o->ncclPath = value;
    } else if (arg == "--json") {
      o->jsonPath = value;
    } else if (arg == "--layout") {
      if (value == "auto") {
        o->layout = Layout::kAuto;
      } else if (value == "threads") {
        o->layout = Layout::kThreads;
      } else if (value == "processes") {
        o->layout = Layout::kProcesses;
      } else {
        return bad() + " (auto, threads or processes)";
      }
    } else if (arg == "--ranks") {
      const auto v = parseInt(value, 2, 64);  // kMaxRanks (shared_state.h)
      if (!v) return bad() + " (2 to 64)";
      o->ranks = int(*v);
    } else if (arg == "--factor") {
      const auto v = parseInt(value, 2, 1 << 20);
      if (!v) return bad() + " (at least 2)";
      o->factor = size_t(*v);
    } else if (arg == "--rounds") {
      const auto v = parseInt(value, 1, 1000);
      if (!v) return bad() + " (1 to 1000)";
      o->rounds = int(*v);
    } else if (arg == "--deadline") {
      const auto v = parseInt(value, 1, 86400);
      if (!v) return bad() + " (seconds, 1 to 86400)";
      o->deadlineSeconds = double(*v);
    } else if (arg == "--min" || arg == "--max") {
      const auto v = parseBytes(value);
      if (!v || *v < 4) return bad() + " (bytes >= 4, e.g. 8, 64K, 1G)";
      (arg == "--min" ? o->minBytes : o->maxBytes) = *v;
    } else {
      return "unknown argument '" + arg + "'";
    }
  }
  if (o->minBytes > o->maxBytes) return "--min is larger than --max";
  return "";
}

}  // namespace braid::perf
