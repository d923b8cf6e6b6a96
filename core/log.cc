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
  const Sink* replaced = nullptr;  // the settings this one replaced (never freed)
};

Sink* readSink() {
  auto* s = new Sink;
  if (const char* v = std::getenv("BRAID_DEBUG")) {
    if (strcasecmp(v, "WARN") == 0)
      s->level = LogLevel::kWarn;
    else if (strcasecmp(v, "INFO") == 0)
      s->level = LogLevel::kInfo;
    else if (strcasecmp(v, "TRACE") == 0)
      s->level = LogLevel::kTrace;
  }
  if (const char* f = std::getenv("BRAID_DEBUG_FILE");
      f != nullptr && s->level != LogLevel::kNone) {
    if (FILE* opened = std::fopen(f, "a")) s->file = opened;
  }
  gethostname(s->host, sizeof(s->host) - 1);
  return s;
}

// The settings in force. A sink once published is never freed (nor its file closed): a thread
// inside logf may still write through it after reloadLogSettings replaced it; a reload is rare
// and a sink small.
std::atomic<const Sink*> current{nullptr};

const Sink& sink() {
  const Sink* s = current.load(std::memory_order_acquire);
  if (s != nullptr) return *s;
  const Sink* fresh = readSink();
  if (current.compare_exchange_strong(s, fresh, std::memory_order_acq_rel)) return *fresh;
  if (fresh->file != stderr) std::fclose(fresh->file);  // another thread published first
  delete fresh;
  return *s;
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

void reloadLogSettings() {
  Sink* fresh = readSink();
  fresh->replaced = current.load(std::memory_order_acquire);  // kept reachable: see current
  while (!current.compare_exchange_weak(fresh->replaced, fresh, std::memory_order_acq_rel)) {
  }
  detail::knownLogLevel.store(static_cast<int>(sink().level), std::memory_order_relaxed);
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
