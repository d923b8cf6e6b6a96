// The one measurement loop shared by the braid, OpenMPI and Gloo comparison
// programs (bench_braid, bench_mpi, bench_gloo), so that perf/compare times the
// three libraries in literally the same way; only the Backend adapter differs.
//
// Methodology (nccl-tests sizes and bus-bandwidth factors):
//   - `size` is nccl-tests' size: the bytes of the larger buffer (allreduce,
//     broadcast: count*4; allgather: recv; reducescatter: send; alltoall: the
//     whole send buffer; sendrecv: what each rank sends to its right
//     neighbour while it receives as much from its left, in one call).
//     Sizes whose per-rank count would be 0 are skipped.
//   - warm-up calls, then for each timed iteration: backend barrier, time one
//     call with steady_clock on every rank; after the loop an element-wise max
//     over ranks turns the per-rank times into per-iteration times (an
//     iteration lasts until its slowest rank is done). The reported time is the
//     median of those; algbw = size / time, busbw = algbw * factor.
//   - Every per-iteration time goes into the JSON (samples_us) so that the
//     driver can pool several alternating runs before taking the median.
//   - The call pattern (-p) decides what comes between two timed calls:
//       isolated      a barrier, then the call (the default, and the case of a
//                     training step that waits for its peers);
//       gap           every rank first reads and writes a buffer larger than
//                     its L3 (-g bytes; twice the L3 by default), as compute
//                     between two collectives would, so the call starts with
//                     cold caches and cold FIFO lines; then the barrier and call;
//       back-to-back  one barrier before the loop, then the calls one after
//                     another (a pipelined loop; each sample is one call).
// The JSON has the fields perf/plot reads from braid-perf -J files.
#ifndef BRAID_PERF_BASELINES_BENCH_LOOP_H_
#define BRAID_PERF_BASELINES_BENCH_LOOP_H_

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tools/cli/cli.h"

namespace bench {

enum class Collective { kAllReduce, kBroadcast, kAllGather, kReduceScatter, kAllToAll, kSendRecv };

inline const char* collectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "allreduce";
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kAllGather:
      return "allgather";
    case Collective::kReduceScatter:
      return "reducescatter";
    case Collective::kAllToAll:
      return "alltoall";
    case Collective::kSendRecv:
      return "sendrecv";
  }
  return "?";
}

// nccl-tests' busbw factor: the share of `size` each rank must move.
inline double busBwFactor(Collective c, int n) {
  if (c == Collective::kAllReduce) return 2.0 * (n - 1) / n;
  if (c == Collective::kBroadcast || c == Collective::kSendRecv) return 1.0;
  return static_cast<double>(n - 1) / n;
}

// The per-rank element count the API takes for a `size`-byte test.
inline size_t perRankCount(Collective c, size_t size, int n) {
  size_t elements = size / sizeof(float);
  if (c == Collective::kAllReduce || c == Collective::kBroadcast || c == Collective::kSendRecv) {
    return elements;
  }
  return elements / n;
}

// Iteration counts depend on the size only, the same for every backend; they
// keep a full 2- and 4-rank sweep to minutes on a 2-core machine.
inline int warmupIterations(size_t size) { return size <= (1u << 20) ? 5 : 2; }
inline int timedIterations(size_t size) {
  if (size <= (64u << 10)) return 40;
  if (size <= (2u << 20)) return 20;
  if (size <= (16u << 20)) return 10;
  return 5;
}

enum class Pattern { kIsolated, kGap, kBackToBack };

inline const char* patternName(Pattern p) {
  switch (p) {
    case Pattern::kIsolated:
      return "isolated";
    case Pattern::kGap:
      return "gap";
    case Pattern::kBackToBack:
      return "back-to-back";
  }
  return "?";
}

inline std::optional<Pattern> parsePattern(const std::string& name) {
  for (Pattern p : {Pattern::kIsolated, Pattern::kGap, Pattern::kBackToBack}) {
    if (name == patternName(p)) return p;
  }
  return std::nullopt;
}

struct Options {
  size_t minBytes = 8;
  size_t maxBytes = 128u << 20;
  size_t factor = 8;
  std::vector<Collective> collectives;
  std::string jsonPath;
  Pattern pattern = Pattern::kIsolated;
  size_t gapBytes = 0;  // the gap pattern's eviction buffer; 0 with the other patterns
};

// The L3 size of the CPU this process runs on, from sysfs (glibc's sysconf reports the sum over
// a VM's sockets on some hosts); 0 when unknown.
inline size_t l3Bytes() {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream level(dir + "/level"), size(dir + "/size");
    int levelValue = 0;
    std::string sizeText;
    if (!(level >> levelValue) || !(size >> sizeText)) continue;
    if (levelValue != 3 || sizeText.empty()) continue;
    size_t value = std::strtoull(sizeText.c_str(), nullptr, 10);
    const char unit = sizeText.back();
    if (unit == 'K') value <<= 10;
    if (unit == 'M') value <<= 20;
    return value;
  }
  return 0;
}

// The gap pattern's default buffer: twice the L3, so that no line the call used survives it.
inline size_t defaultGapBytes() {
  const size_t l3 = l3Bytes();
  return l3 ? 2 * l3 : size_t{64} << 20;
}

// Stands for the compute between two collectives: reads and writes every cache line of a
// buffer larger than the L3, which leaves the caches holding none of the collective's lines.
class CacheEvictor {
 public:
  explicit CacheEvictor(size_t bytes) : buffer_(bytes, 1) {}
  void touch() {
    unsigned char sum = 0;
    for (size_t i = 0; i < buffer_.size(); i += 64) {
      sum = static_cast<unsigned char>(sum + buffer_[i]);
      buffer_[i] = sum;
    }
    sink_ = sum;
  }

 private:
  std::vector<unsigned char> buffer_;
  volatile unsigned char sink_ = 0;  // keeps the loop from being optimised away
};

inline bool parseCollectives(const char* list, std::vector<Collective>* out) {
  const Collective all[] = {Collective::kAllReduce, Collective::kBroadcast,
                            Collective::kAllGather, Collective::kReduceScatter,
                            Collective::kAllToAll,  Collective::kSendRecv};
  std::string text(list);
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string name = text.substr(start, end - start);
    bool known = false;
    for (Collective c : all) {
      if (name == "all" || name == collectiveName(c)) {
        out->push_back(c);
        known = true;
      }
    }
    if (!known) return false;
    start = end + 1;
  }
  return true;
}

// A byte count: digits with an optional K, M or G suffix (powers of 1024, as nccl-tests reads
// them), from 1 to kMaxBytes; nothing on failure.
inline constexpr size_t kMaxBytes = size_t{1} << 40;

inline std::optional<size_t> parseBytes(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 13) return std::nullopt;  // no sign, no blanks, no overflow
  size_t unit = 1;
  const std::string suffix = text.substr(digits);
  if (suffix == "K" || suffix == "k") {
    unit = size_t{1} << 10;
  } else if (suffix == "M" || suffix == "m") {
    unit = size_t{1} << 20;
  } else if (suffix == "G" || suffix == "g") {
    unit = size_t{1} << 30;
  } else if (!suffix.empty()) {
    return std::nullopt;
  }
  const size_t value = std::stoull(text.substr(0, digits)) * unit;  // < 10^13 * 2^30 < 2^64
  if (value == 0 || value > kMaxBytes) return std::nullopt;
  return value;
}

// Parses the command line (prog [-b MIN] [-e MAX] [-f FACTOR] [-c COLL[,COLL...]|all]
// [-p PATTERN] [-g BYTES] [-J FILE]) into `options`. Returns nothing when the program should go on,
// else its exit status: 0 after --help, 2 after one sentence that names the argument refused.
inline std::optional<int> parseOptions(int argc, const char* const* argv,
                                       const std::string& program, Options* options) {
  std::string minText = "8", maxText = "128M", collectives = "all", patternText = "isolated";
  std::string gapText;
  CLI::App app{
      "Times one collective library's collectives over a sweep of sizes, in the same "
      "loop as the other baselines (perf/compare runs them side by side).",
      program};
  app.set_help_flag("-h,--help", "print this help");
  app.add_option("-b", minText, "smallest size in bytes, K/M/G suffixes (8)")->type_name("MIN");
  app.add_option("-e", maxText, "largest size in bytes, K/M/G suffixes (128M)")->type_name("MAX");
  app.add_option("-f", options->factor, "multiply the size by this each step, 2 to 1024 (8)")
      ->type_name("FACTOR")
      ->check(CLI::Range(size_t{2}, size_t{1024}));
  app.add_option("-c", collectives,
                 "allreduce, broadcast, allgather, reducescatter, alltoall, sendrecv, "
                 "comma-separated, or all (all)")
      ->type_name("COLL,...");
  app.add_option("-p", patternText,
                 "what comes between two timed calls: isolated (a barrier), gap (a sweep over a "
                 "buffer larger than the L3, then a barrier) or back-to-back (nothing) (isolated)")
      ->type_name("PATTERN");
  app.add_option("-g", gapText,
                 "with -p gap: bytes each rank sweeps before every timed call, K/M/G suffixes "
                 "(twice the L3)")
      ->type_name("BYTES");
  app.add_option("-J", options->jsonPath, "also write the results to this JSON file")
      ->type_name("FILE");
  if (std::optional<int> exit = braid::cli::parse(app, argc, argv)) return exit;
  const std::optional<size_t> minBytes = parseBytes(minText), maxBytes = parseBytes(maxText);
  const std::optional<Pattern> pattern = parsePattern(patternText);
  const std::optional<size_t> gapBytes = gapText.empty() ? std::nullopt : parseBytes(gapText);
  std::string why;
  if (!minBytes) {
    why = "-b: expected a byte count from 1 to 1024G (digits and an optional K, M or G), got '" +
          minText + "'";
  } else if (!maxBytes) {
    why = "-e: expected a byte count from 1 to 1024G (digits and an optional K, M or G), got '" +
          maxText + "'";
  } else if (*minBytes > *maxBytes) {
    why = "-b " + minText + " is larger than -e " + maxText;
  } else if (!parseCollectives(collectives.c_str(), &options->collectives)) {
    why =
        "-c: expected collective names separated by commas (allreduce, broadcast, allgather, "
        "reducescatter, alltoall, sendrecv) or all, got '" +
        collectives + "'";
  } else if (!pattern) {
    why = "-p: expected isolated, gap or back-to-back, got '" + patternText + "'";
  } else if (!gapText.empty() && !gapBytes) {
    why = "-g: expected a byte count from 1 to 1024G (digits and an optional K, M or G), got '" +
          gapText + "'";
  } else if (!gapText.empty() && *pattern != Pattern::kGap) {
    why = "-g " + gapText + " applies to -p gap only, not -p " + patternText;
  }
  if (!why.empty()) {
    braid::cli::usageError(program, why);
    return braid::cli::kUsageError;
  }
  options->minBytes = *minBytes;
  options->maxBytes = *maxBytes;
  options->pattern = *pattern;
  if (*pattern == Pattern::kGap) options->gapBytes = gapBytes ? *gapBytes : defaultGapBytes();
  return std::nullopt;
}

struct Result {
  Collective collective;
  size_t size;
  size_t count;
  std::vector<double> samplesUs;  // per-iteration max over ranks
  double medianUs;
  // Per rank (index: rank): the process's CPU time over the timed loop (barriers included),
  // user and system (a kernel-driven transport's packet work lands in the latter), and its
  // thread count at the end. For the JSON only: they say where a difference in time went.
  std::vector<double> cpuUserUs, cpuSysUs, threads;
};

// This process's user and system CPU time so far, in microseconds.
inline void processCpuUs(double* user, double* sys) {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  *user = usage.ru_utime.tv_sec * 1e6 + usage.ru_utime.tv_usec;
  *sys = usage.ru_stime.tv_sec * 1e6 + usage.ru_stime.tv_usec;
}

// This process's thread count (Linux /proc), 0 when unknown.
inline double processThreads() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "Threads:") {
      double n = 0;
      status >> n;
      return n;
    }
    status.ignore(1 << 16, '\n');
  }
  return 0;
}

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// Backend needs: rank(), nranks(), supports(c), prepare(c, count, send, recv),
// run(c, count, send, recv), barrier(), maxOverRanks(double*, n). Failures
// inside a backend print a message and exit, as a benchmark may.
template <typename Backend>
std::vector<Result> runSweep(Backend& backend, const Options& options) {
  const int n = backend.nranks();
  const size_t floats = options.maxBytes / sizeof(float) + 1;
  std::vector<float> send(floats, 1.0f), recv(floats, 0.0f);
  std::optional<CacheEvictor> evictor;
  if (options.pattern == Pattern::kGap) evictor.emplace(options.gapBytes);
  std::vector<Result> results;
  for (Collective c : options.collectives) {
    if (!backend.supports(c)) continue;
    for (size_t size = options.minBytes; size <= options.maxBytes; size *= options.factor) {
      size_t count = perRankCount(c, size, n);
      if (count == 0) continue;
      backend.prepare(c, count, send.data(), recv.data());
      for (int i = 0; i < warmupIterations(size); ++i)
        backend.run(c, count, send.data(), recv.data());
      std::vector<double> times(timedIterations(size));
      if (options.pattern == Pattern::kBackToBack) backend.barrier();
      double user0 = 0, sys0 = 0;
      processCpuUs(&user0, &sys0);
      for (double& time : times) {
        if (evictor) evictor->touch();
        if (options.pattern != Pattern::kBackToBack) backend.barrier();
        auto start = std::chrono::steady_clock::now();
        backend.run(c, count, send.data(), recv.data());
        time = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                   .count();
      }
      double user1 = 0, sys1 = 0;
      processCpuUs(&user1, &sys1);
      // Each rank fills its own slots; a max over ranks gathers them (all are >= 0).
      std::vector<double> cpu(3 * static_cast<size_t>(n), 0.0);
      const size_t me = static_cast<size_t>(backend.rank());
      cpu[me] = user1 - user0;
      cpu[n + me] = sys1 - sys0;
      cpu[2 * n + me] = processThreads();
      backend.maxOverRanks(times.data(), times.size());
      backend.maxOverRanks(cpu.data(), cpu.size());
      results.push_back({c,
                         size,
                         count,
                         times,
                         median(times),
                         {cpu.begin(), cpu.begin() + n},
                         {cpu.begin() + n, cpu.begin() + 2 * n},
                         {cpu.begin() + 2 * n, cpu.end()}});
    }
  }
  return results;
}

inline void report(const char* backendName, const char* transport, int n,
                   const std::vector<Result>& results, const Options& options) {
  std::printf("# %s, %d ranks, %s, %s pattern", backendName, n, transport,
              patternName(options.pattern));
  if (options.pattern == Pattern::kGap) std::printf(" (%zu B swept per call)", options.gapBytes);
  std::printf(": median of per-iteration max-over-ranks time\n");
  std::printf("# %-13s %12s %12s %10s %10s\n", "collective", "size(B)", "time(us)", "algbw",
              "busbw");
  for (const Result& r : results) {
    double algbw = r.size / r.medianUs / 1e3;
    std::printf("  %-13s %12zu %12.2f %10.3f %10.3f\n", collectiveName(r.collective), r.size,
                r.medianUs, algbw, algbw * busBwFactor(r.collective, n));
  }
  if (options.jsonPath.empty()) return;
  FILE* file = std::fopen(options.jsonPath.c_str(), "w");
  if (!file) {
    std::fprintf(stderr, "%s: cannot write %s\n", backendName, options.jsonPath.c_str());
    std::exit(1);
  }
  std::fprintf(file,
               "{\n  \"tool\": \"bench_%s\", \"backend\": \"%s\", \"transport\": \"%s\", "
               "\"nranks\": %d,\n  \"pattern\": \"%s\", \"gap_bytes\": %zu,\n  \"results\": [",
               backendName, backendName, transport, n, patternName(options.pattern),
               options.gapBytes);
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    double algbw = r.size / r.medianUs / 1e3;
    bool rooted = r.collective == Collective::kBroadcast;
    bool reduces =
        r.collective == Collective::kAllReduce || r.collective == Collective::kReduceScatter;
    std::fprintf(file,
                 "%s\n    {\"collective\": \"%s\", \"size\": %zu, \"count\": %zu, "
                 "\"type\": \"float32\", \"redop\": \"%s\", \"root\": %d, \"inplace\": false, "
                 "\"time_us\": %.9g, \"algbw\": %.9g, \"busbw\": %.9g, \"busbw_factor\": %.9g, "
                 "\"samples_us\": [",
                 i ? "," : "", collectiveName(r.collective), r.size, r.count,
                 reduces ? "sum" : "none", rooted ? 0 : -1, r.medianUs, algbw,
                 algbw * busBwFactor(r.collective, n), busBwFactor(r.collective, n));
    for (size_t j = 0; j < r.samplesUs.size(); ++j)
      std::fprintf(file, "%s%.6g", j ? ", " : "", r.samplesUs[j]);
    std::fprintf(file, "]");
    const std::pair<const char*, const std::vector<double>*> perRank[] = {
        {"cpu_user_us", &r.cpuUserUs}, {"cpu_sys_us", &r.cpuSysUs}, {"threads", &r.threads}};
    for (const auto& [key, values] : perRank) {
      std::fprintf(file, ", \"%s\": [", key);
      for (size_t j = 0; j < values->size(); ++j)
        std::fprintf(file, "%s%.6g", j ? ", " : "", (*values)[j]);
      std::fprintf(file, "]");
    }
    std::fprintf(file, "}");
  }
  std::fprintf(file, "\n  ]\n}\n");
  std::fclose(file);
}

/// Everything after the command line and the library's start: build the backend, sweep, and
/// have rank 0 report under `name` and the transport named by `transportVar` (or
/// `defaultTransport`). Returns the exit status.
template <typename Backend>
int runParsed(const Options& options, const char* name, const char* transportVar,
              const char* defaultTransport) {
  Backend backend;
  auto results = runSweep(backend, options);
  const char* transport = std::getenv(transportVar);
  if (backend.rank() == 0) {
    report(name, transport ? transport : defaultTransport, backend.nranks(), results, options);
  }
  return 0;
}

/// The whole program for a library that needs no start-up call: parse the command line (as
/// program "bench_<name>"), then runParsed.
template <typename Backend>
int runMain(int argc, char** argv, const char* name, const char* transportVar,
            const char* defaultTransport) {
  Options options;
  if (std::optional<int> exit = parseOptions(argc, argv, std::string("bench_") + name, &options)) {
    return *exit;
  }
  return runParsed<Backend>(options, name, transportVar, defaultTransport);
}

}  // namespace bench

#endif  // BRAID_PERF_BASELINES_BENCH_LOOP_H_
