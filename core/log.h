// Logging to stderr (or BRAID_DEBUG_FILE), filtered by BRAID_DEBUG=WARN|INFO|TRACE.
// Both are read at the first line logged, and again on request (reloadLogSettings).
// Each line carries host, pid and, where known, the rank.
#pragma once

#include <atomic>

namespace braid {

enum class LogLevel { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

/// The level set by BRAID_DEBUG (read at the first line, and again by reloadLogSettings).
LogLevel logLevel();

/// Reads BRAID_DEBUG and BRAID_DEBUG_FILE again, for the lines after it (braidResetDebugInit).
void reloadLogSettings();

namespace detail {
/// logLevel() once read (-1 before): what the macros below test without a call.
extern std::atomic<int> knownLogLevel;
}  // namespace detail

/// Whether a line at `level` is written. Inline: a disabled trace line on a hot path
/// costs a load, not a call.
inline bool logs(LogLevel level) {
  int known = detail::knownLogLevel.load(std::memory_order_relaxed);
  if (known < 0) known = static_cast<int>(logLevel());
  return level != LogLevel::kNone && static_cast<int>(level) <= known;
}

/// Sets the rank shown in this thread's log lines (-1: unknown).
void setLogRank(int rank);

/// printf-style; does nothing when `level` is above logLevel().
void logf(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace braid

#define BRAID_LOG_AT(level, ...)                                 \
  do {                                                           \
    if (::braid::logs(level)) ::braid::logf(level, __VA_ARGS__); \
  } while (0)
#define BRAID_WARN(...) BRAID_LOG_AT(::braid::LogLevel::kWarn, __VA_ARGS__)
#define BRAID_INFO(...) BRAID_LOG_AT(::braid::LogLevel::kInfo, __VA_ARGS__)
#define BRAID_TRACE(...) BRAID_LOG_AT(::braid::LogLevel::kTrace, __VA_ARGS__)
