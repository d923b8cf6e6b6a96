// See result_log.h.
#include "result_log.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace braid::perf {
namespace {

// nccl-tests' bus bandwidth factors.
double busFactor(Collective c, int n) {
  return c == Collective::kAllReduce ? 2.0 * (n - 1) / n : double(n - 1) / n;
}

// A JSON string literal; error texts may hold quotes or backslashes.
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) {
      out += ' ';
      continue;
    }
    out += ch;
  }
  return out + "\"";
}

}  // namespace

ResultLog::ResultLog(const Options& options, std::string ncclVersion, std::string ncclPath,
                     std::string layout, bool quiet)
    : options_(options),
      ncclVersion_(std::move(ncclVersion)),
      ncclPath_(std::move(ncclPath)),
      layout_(std::move(layout)) {
  if (quiet) return;
  std::printf("# braid vs NCCL %s, %d ranks on GPU 0 (%s), float32 sum, median of %d rounds\n",
              ncclVersion_.empty() ? "(unavailable)" : ncclVersion_.c_str(), options.ranks,
              layout_.c_str(), options.rounds);
  std::printf("# %-13s %12s %11s %11s %12s %12s %8s\n", "collective", "bytes", "braid(us)",
              "NCCL(us)", "braid(GB/s)", "NCCL(GB/s)", "ratio");
  std::fflush(stdout);
}

void ResultLog::row(Collective c, size_t bytes, double braidSeconds, double ncclSeconds) {
  std::lock_guard<std::mutex> lock(mu_);
  rows_.push_back({c, bytes, braidSeconds, ncclSeconds});
  const double f = busFactor(c, options_.ranks);
  const double b = braidSeconds > 0 ? f * double(bytes) / braidSeconds / 1e9 : 0;
  const double n = ncclSeconds > 0 ? f * double(bytes) / ncclSeconds / 1e9 : 0;
  std::printf("  %-13s %12zu %11.2f %11.2f %12.2f %12.2f %8.2f\n", collectiveName(c), bytes,
              braidSeconds * 1e6, ncclSeconds * 1e6, b, n, n > 0 ? b / n : 0.0);
  std::fflush(stdout);
}

void ResultLog::ncclUnavailable(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ncclError_.empty()) return;
  ncclError_ = why;
  std::printf("# NCCL cannot run here: %s\n", why.c_str());
  std::fflush(stdout);
}

void ResultLog::fail(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (braidError_.empty()) braidError_ = why;
  std::fprintf(stderr, "braid-nccl-compare: %s\n", why.c_str());
}

void ResultLog::startWatchdog(double seconds) {
  std::thread([this, seconds] {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    std::lock_guard<std::mutex> lock(mu_);
    std::fprintf(stderr, "braid-nccl-compare: still running after %.0f s (a hang?); stopping\n",
                 seconds);
    writeJsonLocked("watchdog: stopped after the deadline");
    std::fflush(nullptr);
    std::_Exit(4);
  }).detach();
}

void ResultLog::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  writeJsonLocked("");
}

void ResultLog::writeJsonLocked(const char* ending) {
  if (written_ || options_.jsonPath.empty()) return;
  written_ = true;
  std::FILE* f = std::fopen(options_.jsonPath.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "braid-nccl-compare: cannot write %s\n", options_.jsonPath.c_str());
    return;
  }
  std::fprintf(f,
               "{\n \"tool\": \"braid-nccl-compare\", \"nranks\": %d, \"layout\": "
               "\"%s, one GPU\",\n \"nccl_version\": %s, \"nccl_path\": %s,\n"
               " \"nccl_error\": %s, \"braid_error\": %s, \"ending\": %s,\n \"results\": [",
               options_.ranks, layout_.c_str(), quote(ncclVersion_).c_str(),
               quote(ncclPath_).c_str(), quote(ncclError_).c_str(), quote(braidError_).c_str(),
               quote(ending).c_str());
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row& r = rows_[i];
    const double factor = busFactor(r.c, options_.ranks);
    const double b = r.braidSeconds > 0 ? factor * double(r.bytes) / r.braidSeconds / 1e9 : 0;
    const double n = r.ncclSeconds > 0 ? factor * double(r.bytes) / r.ncclSeconds / 1e9 : 0;
    std::fprintf(f,
                 "%s\n  {\"collective\": \"%s\", \"size\": %zu, \"braid_us\": %.6g, "
                 "\"nccl_us\": %.6g, \"braid_busbw\": %.6g, \"nccl_busbw\": %.6g, "
                 "\"ratio_busbw\": %.6g}",
                 i ? "," : "", collectiveName(r.c), r.bytes, r.braidSeconds * 1e6,
                 r.ncclSeconds * 1e6, b, n, n > 0 ? b / n : 0.0);
  }
  std::fprintf(f, "\n ]\n}\n");
  std::fclose(f);
}

}  // namespace braid::perf
