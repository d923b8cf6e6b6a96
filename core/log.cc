#include "core/log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace braid {
namespace {

thread_local int tlsRank = -1;

struct Sink {
  LogLevel level = LogLevel::kNone;
  FILE* file = stderr;
  char host[64] = "?";
};

const Sink& sink() {
  static const Sink s = [] {
    Sink s;
    if (const char* v = std::getenv("BRAID_DEBUG")) {
      if (strcasecmp(v, "WARN") == 0)
        s.level = LogLevel::kWarn;
      else if (strcasecmp(v, "INFO") == 0)
        s.level = LogLevel::kInfo;
      else if (strcasecmp(v, "TRACE") == 0)
        s.level = LogLevel::kTrace;
    }
    if (const char* f = std::getenv("BRAID_DEBUG_FILE");
        f != nullptr && s.level != LogLevel::kNone) {
      if (FILE* opened = std::fopen(f, "a")) s.file = opened;
    }
    gethostname(s.host, sizeof(s.host) - 1);
    return s;
  }();
  return s;
}

}  // namespace

namespace detail {
std::atomic<int> knownLogLevel{-1};
}  // namespace detail

LogLevel logLevel() {
  const LogLevel level = sink().level;
  detail::knownLogLevel.store(static_cast<int>(level), std::memory_order_relaxed);
  return level;
}

void setLogRank(int rank) { tlsRank = rank; }

void logf(LogLevel level, const char* fmt, ...) {
  const Sink& s = sink();
  if (level > s.level || level == LogLevel::kNone) return;
  static const char* const kNames[] = {"", "WARN", "INFO", "TRACE"};
  char line[1024];
  int n = std::snprintf(line, sizeof(line), "%s:%d:%d [braid %s] ", s.host,
                        static_cast<int>(getpid()), tlsRank, kNames[static_cast<int>(level)]);
  va_list args;
  va_start(args, fmt);
  if (n > 0 && n < static_cast<int>(sizeof(line))) {
    std::vsnprintf(line + n, sizeof(line) - n, fmt, args);
  }
  va_end(args);
  // One fputs per line keeps lines from different threads whole.
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(s.file, "%s\n", line);
  std::fflush(s.file);
}

}  // namespace braid
