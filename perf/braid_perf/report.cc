#include "report.h"

#include <cinttypes>
#include <cstdlib>

#include "types.h"

namespace braid::perf {
namespace {

const char* envOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : fallback;
}

const char* aggregationName(TimeAggregation aggregation) {
  switch (aggregation) {
    case TimeAggregation::kRank0:
      return "rank0";
    case TimeAggregation::kAverage:
      return "avg";
    case TimeAggregation::kMin:
      return "min";
    case TimeAggregation::kMax:
      return "max";
  }
  return "?";
}

// nccl-tests' precision: fewer decimals as the time grows, always 7 wide.
std::string formatMicros(double seconds) {
  const double micros = seconds * 1.0e6;
  char text[32];
  const char* format = micros >= 10000.0 ? "%7.0f" : micros >= 100.0 ? "%7.1f" : "%7.2f";
  std::snprintf(text, sizeof(text), format, micros);
  return text;
}

std::string formatWrong(const Measurement& m) {
  return m.wrong ? std::to_string(*m.wrong) : std::string("N/A");
}

const char* opColumn(const Measurement& m) { return m.op ? opName(*m.op) : "none"; }

}  // namespace

Report::Report(const Options& options, int nranks, bool prints, std::FILE* out)
    : options_(options), nranks_(nranks), prints_(prints), out_(out) {}

void Report::printHeader(const std::vector<std::string>& rankLines) const {
  if (!prints_) return;
  int version = 0;
  if (braidGetVersion(&version) != braidSuccess) version = 0;
  std::string names;
  for (CollectiveKind kind : options_.collectives) {
    names += std::string(names.empty() ? "" : " ") + collectiveInfo(kind).name;
  }
  std::fprintf(out_, "# braid-perf: %s (braid %d.%d.%d)\n", names.c_str(), version / 10000,
               version / 100 % 100, version % 100);
  std::string step = options_.stepFactor > 1 ? std::to_string(options_.stepFactor) + "(factor)"
                                             : std::to_string(options_.stepBytes) + "(bytes)";
  std::fprintf(out_,
               "# nRanks %d minBytes %zu maxBytes %zu step: %s warmup iters: %d iters: %d "
               "agg iters: %d validation: %d memory: %s unaligned: %d time: %s\n",
               nranks_, options_.minBytes, options_.maxBytes, step.c_str(), options_.warmupIters,
               options_.iters, options_.aggIters, options_.check ? 1 : 0,
               options_.memory == MemoryKind::kDevice ? "device" : "host",
               options_.unaligned ? 1 : 0, aggregationName(options_.aggregation));
  std::fprintf(out_, "# BRAID_TRANSPORT=%s BRAID_ALGO=%s BRAID_PROTO=%s BRAID_TIMEOUT=%s\n",
               envOr("BRAID_TRANSPORT", "(auto)"), envOr("BRAID_ALGO", "(auto)"),
               envOr("BRAID_PROTO", "(auto)"), envOr("BRAID_TIMEOUT", "(default)"));
  std::fprintf(out_, "#\n# Using ranks\n");
  for (const std::string& line : rankLines) std::fprintf(out_, "%s\n", line.c_str());
  std::fprintf(out_, "#\n");
  std::fflush(out_);
}

void Report::printColumns(CollectiveKind kind) const {
  if (!prints_) return;
  std::fprintf(out_, "# Collective: %s\n", collectiveInfo(kind).name);
  std::fprintf(out_,
               "# %10s  %12s  %8s  %6s  %6s           out-of-place                       "
               "in-place\n",
               "", "", "", "", "");
  std::fprintf(out_, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size",
               "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
               "algbw", "busbw", "#wrong");
  std::fprintf(out_, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)",
               "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
               "");
  std::fflush(out_);
}

void Report::addRow(const Measurement& outOfPlace, const Measurement& inPlace) {
  results_.push_back(outOfPlace);
  results_.push_back(inPlace);
  if (!prints_) return;
  std::fprintf(out_, "%12zu  %12zu  %8s  %6s  %6d", outOfPlace.bytes, outOfPlace.count,
               typeName(outOfPlace.type), opColumn(outOfPlace), outOfPlace.root);
  for (const Measurement* m : {&outOfPlace, &inPlace}) {
    std::fprintf(out_, "  %7s  %6.2f  %6.2f  %5s", formatMicros(m->seconds).c_str(), m->algBw,
                 m->busBw, formatWrong(*m).c_str());
  }
  std::fprintf(out_, "\n");
  std::fflush(out_);
}

void Report::printFooter() const {
  if (!prints_) return;
  double busBwSum = 0.0;
  for (const Measurement& m : results_) busBwSum += m.busBw;
  const double busBwMean = results_.empty() ? 0.0 : busBwSum / results_.size();
  const int failed = failedResults();
  std::fprintf(out_, "# Out of bounds values : %d %s\n", failed, failed ? "FAILED" : "OK");
  std::fprintf(out_, "# Avg bus bandwidth    : %g \n#\n", busBwMean);
  std::fflush(out_);
}

int Report::failedResults() const {
  int failed = 0;
  for (const Measurement& m : results_) failed += (m.wrong && *m.wrong > 0) ? 1 : 0;
  return failed;
}

bool Report::writeJson(const std::string& path, std::string* error) const {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    *error = "-J/--json: cannot open '" + path + "' for writing";
    return false;
  }
  // Every string written is one of our own identifiers: nothing to escape.
  std::fprintf(file, "{\n  \"tool\": \"braid-perf\",\n  \"nranks\": %d,\n  \"results\": [",
               nranks_);
  for (size_t i = 0; i < results_.size(); ++i) {
    const Measurement& m = results_[i];
    std::fprintf(file,
                 "%s\n    {\"collective\": \"%s\", \"size\": %zu, \"count\": %zu, "
                 "\"type\": \"%s\", \"redop\": \"%s\", \"root\": %d, \"inplace\": %s, "
                 "\"time_us\": %.9g, \"algbw\": %.9g, \"busbw\": %.9g, \"wrong\": ",
                 i == 0 ? "" : ",", collectiveInfo(m.kind).name, m.bytes, m.count, typeName(m.type),
                 opColumn(m), m.root, m.inPlace ? "true" : "false", m.seconds * 1.0e6, m.algBw,
                 m.busBw);
    if (m.wrong) {
      std::fprintf(file, "%" PRId64 "}", *m.wrong);
    } else {
      std::fprintf(file, "null}");
    }
  }
  std::fprintf(file, "\n  ]\n}\n");
  if (std::fclose(file) != 0) {
    *error = "-J/--json: writing '" + path + "' failed";
    return false;
  }
  return true;
}

}  // namespace braid::perf
