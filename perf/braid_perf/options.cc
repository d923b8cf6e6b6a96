#include "options.h"

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "tools/cli/cli.h"
#include "types.h"

namespace braid::perf {
namespace {

// A setter parses one flag's value into Options; it returns "" on success,
// else what was wrong with the value (the caller prefixes the flag's name).
using Setter = std::string (*)(std::string_view value, Options& options);

struct FlagSpec {
  char shortName;        // '\0' for long-only flags
  const char* longName;  // without the leading "--"
  const char* valueName;
  const char* help;
  Setter set;
};

std::string quoted(std::string_view text) {
  // Appending (rather than "'" + std::string(...)) avoids a GCC 12 -Wrestrict false positive.
  std::string result = "'";
  result.append(text);
  result += '\'';
  return result;
}

std::optional<long long> parseInteger(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(copy.c_str(), &end, 0);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return value;
}

// "64", "64K", "1.5M", "2G" (K = 1024, as nccl-tests reads it).
std::optional<size_t> parseBytes(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double unit = 1.0;
  switch (text.back()) {
    case 'k':
    case 'K':
      unit = 1024.0;
      break;
    case 'm':
    case 'M':
      unit = 1024.0 * 1024.0;
      break;
    case 'g':
    case 'G':
      unit = 1024.0 * 1024.0 * 1024.0;
      break;
    default:
      break;
  }
  if (unit != 1.0) text.remove_suffix(1);
  const std::string number(text);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(number.c_str(), &end);
  if (number.empty() || errno != 0 || *end != '\0' || !(value >= 0.0)) return std::nullopt;
  const double bytes = value * unit;
  if (bytes != std::floor(bytes) || bytes > 1e18) return std::nullopt;
  return static_cast<size_t>(bytes);
}

// Integer flags share one shape: parse, then check the range.
std::string setInt(std::string_view value, long long low, long long high, int* out) {
  const std::optional<long long> parsed = parseInteger(value);
  if (!parsed || *parsed < low || *parsed > high) {
    return "expected an integer from " + std::to_string(low) + " to " + std::to_string(high) +
           ", got " + quoted(value);
  }
  *out = static_cast<int>(*parsed);
  return "";
}

std::string setBool(std::string_view value, bool* out) {
  int parsed = 0;
  std::string error = setInt(value, 0, 1, &parsed);
  if (error.empty()) *out = parsed != 0;
  return error;
}

std::string setSize(std::string_view value, size_t* out) {
  const std::optional<size_t> parsed = parseBytes(value);
  if (!parsed) return "expected bytes with an optional K, M or G suffix, got " + quoted(value);
  *out = *parsed;
  return "";
}

constexpr int kMaxIters = 1 << 30;
constexpr int kMaxThreads = 64;  // -t: ranks sharing one GPU in one process

constexpr std::array<FlagSpec, 21> kFlags = {{
    {'b', "minbytes", "BYTES", "smallest size swept (default 32M)",
     [](std::string_view v, Options& o) { return setSize(v, &o.minBytes); }},
    {'e', "maxbytes", "BYTES", "largest size swept (default 32M)",
     [](std::string_view v, Options& o) { return setSize(v, &o.maxBytes); }},
    {'i', "stepbytes", "BYTES", "increment when -f is 1 (default 1M)",
     [](std::string_view v, Options& o) { return setSize(v, &o.stepBytes); }},
    {'f', "stepfactor", "N", "multiply the size by N each step (default 1: add -i)",
     [](std::string_view v, Options& o) {
       const std::optional<long long> parsed = parseInteger(v);
       if (!parsed || *parsed < 1) return "expected an integer >= 1, got " + quoted(v);
       o.stepFactor = static_cast<size_t>(*parsed);
       return std::string();
     }},
    {'o', "op", "OP", "sum, prod, max, min, avg or all (default sum)",
     [](std::string_view v, Options& o) {
       o.ops.clear();
       if (v == "all") {
         for (int op = 0; op < braidNumOps; ++op) o.ops.push_back(static_cast<braidRedOp_t>(op));
         return std::string();
       }
       const std::optional<braidRedOp_t> op = parseOp(v);
       if (!op) return "expected sum, prod, max, min, avg or all, got " + quoted(v);
       o.ops.push_back(*op);
       return std::string();
     }},
    {'d', "datatype", "TYPE",
     "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2 or all "
     "(default float)",
     [](std::string_view v, Options& o) {
       o.types.clear();
       if (v == "all") {
         for (int t = 0; t < braidNumTypes; ++t) o.types.push_back(static_cast<braidDataType_t>(t));
         return std::string();
       }
       const std::optional<braidDataType_t> type = parseType(v);
       if (!type) return "expected a type name (int8 ... f8e5m2) or all, got " + quoted(v);
       o.types.push_back(*type);
       return std::string();
     }},
    {'r', "root", "RANK", "root of rooted collectives, or all (default 0)",
     [](std::string_view v, Options& o) {
       if (v == "all") {
         o.root = Options::kAllRoots;
         return std::string();
       }
       return setInt(v, 0, 1 << 30, &o.root);
     }},
    {'n', "iters", "N", "timed iterations (default 20)",
     [](std::string_view v, Options& o) { return setInt(v, 1, kMaxIters, &o.iters); }},
    {'w', "warmup_iters", "N", "warm-up iterations (default 5)",
     [](std::string_view v, Options& o) { return setInt(v, 0, kMaxIters, &o.warmupIters); }},
    {'m', "agg_iters", "N", "operations per braidGroupStart/End (default 1)",
     [](std::string_view v, Options& o) { return setInt(v, 1, kMaxIters, &o.aggIters); }},
    {'c', "check", "0|1", "check results (default 1)",
     [](std::string_view v, Options& o) { return setBool(v, &o.check); }},
    {'z', "blocking", "0|1", "accepted for compatibility: host calls block anyway",
     [](std::string_view v, Options& o) { return setBool(v, &o.blocking); }},
    {'a', "average", "0..3", "time reported: 0 rank 0, 1 average, 2 min, 3 max (default 1)",
     [](std::string_view v, Options& o) {
       int value = 0;
       std::string error = setInt(v, 0, 3, &value);
       if (error.empty()) o.aggregation = static_cast<TimeAggregation>(value);
       return error;
     }},
    {'T', "timeout", "SECONDS", "sets BRAID_TIMEOUT: no wait lasts longer (default: library's)",
     [](std::string_view v, Options& o) { return setInt(v, 0, 1 << 30, &o.timeoutSeconds); }},
    {'u', "unaligned", "0|1", "start buffers one element past a 64-byte boundary (default 0)",
     [](std::string_view v, Options& o) { return setBool(v, &o.unaligned); }},
    {'J', "json", "FILE", "also write every result to FILE as JSON",
     [](std::string_view v, Options& o) {
       if (v.empty()) return std::string("expected a file name");
       o.jsonPath = v;
       return std::string();
     }},
    {'t', "nthreads", "N",
     "ranks in this process, one thread each, all on one GPU (--memory device; default 1)",
     [](std::string_view v, Options& o) { return setInt(v, 1, kMaxThreads, &o.threads); }},
    {'g', "ngpus", "1", "accepted for nccl-tests scripts; only 1 is meaningful",
     [](std::string_view v, Options&) {
       return v == "1" ? std::string()
                       : "one GPU per process: several ranks on it with --memory device -t N; "
                         "more processes with braidrun -n";
     }},
    {'\0', "memory", "host|device",
     "where buffers live (default host); device: CUDA memory on GPU 0 (CUDA_VISIBLE_DEVICES "
     "picks it), the -t ranks of this process sharing it",
     [](std::string_view v, Options& o) {
       if (v == "host") {
         o.memory = MemoryKind::kHost;
       } else if (v == "device") {
         o.memory = MemoryKind::kDevice;
       } else {
         return "expected host or device, got " + quoted(v);
       }
       return std::string();
     }},
    {'\0', "algo", "NAME", "sets BRAID_ALGO before the communicator is created",
     [](std::string_view v, Options& o) {
       if (v.empty()) return std::string("expected an algorithm name");
       o.algo = v;
       return std::string();
     }},
    {'\0', "proto", "NAME", "sets BRAID_PROTO before the communicator is created",
     [](std::string_view v, Options& o) {
       if (v.empty()) return std::string("expected a protocol name");
       o.proto = v;
       return std::string();
     }},
}};

std::string flagLabel(const FlagSpec& flag) {
  std::string label;
  if (flag.shortName != '\0') label = std::string("-") + flag.shortName + "/";
  return label + "--" + flag.longName;
}

std::string collectiveNames() {
  std::string names;
  for (CollectiveKind kind : allCollectives()) {
    names += std::string(collectiveInfo(kind).name) + ", ";
  }
  return names + "all";
}

// Cross-flag rules, checked once every flag is read.
std::string validate(const Options& options) {
  if (options.minBytes > options.maxBytes) {
    return "-b/--minbytes (" + std::to_string(options.minBytes) +
           ") is larger than -e/--maxbytes (" + std::to_string(options.maxBytes) + ")";
  }
  if (options.stepFactor > 1 && options.minBytes == 0) {
    return "-b/--minbytes must be at least 1 when -f/--stepfactor is above 1";
  }
  if (options.stepFactor == 1 && options.stepBytes == 0 && options.maxBytes > options.minBytes) {
    return "-i/--stepbytes must be positive when -f/--stepfactor is 1";
  }
  return "";
}

std::string footerText() {
  return "Flags mean what they mean to nccl-tests; BYTES take K, M, G suffixes.\n"
         "Test hook:\n"
         "  BRAID_PERF_CORRUPT=RANK  that rank flips one element of its output after each checked\n"
         "                           call (-c 1), so #wrong must be non-zero and the exit status "
         "1;\n"
         "                           for testing the checker only";
}

}  // namespace

ParseResult parseOptions(int argc, char** argv) {
  ParseResult result;
  Options options;
  // nccl-tests' spellings all work: "-b 8", "-b8", "--minbytes 8", "--minbytes=8".
  CLI::App app{"braid-perf: an nccl-tests-compatible bandwidth sweep of one collective.",
               "braid-perf"};
  app.footer(footerText());
  std::vector<std::string> collective;
  app.add_option("collective", collective, collectiveNames());
  for (const FlagSpec& flag : kFlags) {
    std::string names = std::string("--") + flag.longName;
    if (flag.shortName != '\0') names = std::string("-") + flag.shortName + "," + names;
    app.add_option_function<std::string>(
           names,
           [&options, &flag](const std::string& value) {
             if (std::string error = flag.set(value, options); !error.empty()) {
               throw CLI::ValidationError(flagLabel(flag), error);
             }
           },
           flag.help)
        ->type_name(flag.valueName)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    result.helpText = app.help();
    return result;
  } catch (const CLI::ParseError& e) {
    result.error = e.what();
    return result;
  }
  if (collective.empty()) {
    result.error = "missing the collective to measure; expected one of " + collectiveNames();
    return result;
  }
  if (collective.size() > 1) {
    result.error = "unexpected argument " + perf::quoted(collective[1]) +
                   ": give one collective (or all) and flags";
    return result;
  }
  if (collective[0] == "all") {
    options.collectives = allCollectives();
  } else if (const std::optional<CollectiveKind> kind = parseCollective(collective[0])) {
    options.collectives = {*kind};
  } else {
    result.error = "unknown collective " + perf::quoted(collective[0]) + "; expected one of " +
                   collectiveNames();
    return result;
  }
  if (std::string error = validate(options); !error.empty()) {
    result.error = error;
    return result;
  }
  result.options = std::move(options);
  return result;
}

bool readTestHooks(Options* options, std::string* error) {
  const char* corrupt = std::getenv("BRAID_PERF_CORRUPT");
  if (corrupt == nullptr || corrupt[0] == '\0') return true;
  const std::optional<long long> rank = parseInteger(corrupt);
  if (!rank || *rank < 0 || *rank > std::numeric_limits<int>::max()) {
    *error = std::string("BRAID_PERF_CORRUPT: expected a rank number, got '") + corrupt + "'";
    return false;
  }
  options->corruptRank = static_cast<int>(*rank);
  return true;
}

std::vector<size_t> sweepSizes(const Options& options) {
  std::vector<size_t> sizes;
  for (size_t size = options.minBytes; size <= options.maxBytes;) {
    sizes.push_back(size);
    const size_t next =
        options.stepFactor > 1 ? size * options.stepFactor : size + options.stepBytes;
    if (next <= size) break;  // a zero step, or overflow
    size = next;
  }
  return sizes;
}

}  // namespace braid::perf
