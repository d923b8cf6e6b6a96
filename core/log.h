// Logging to stderr (or BRAID_DEBUG_FILE), filtered by BRAID_DEBUG=WARN|INFO|TRACE.
// Each line carries host, pid and, where known, the rank.
#pragma once

namespace braid {

enum class LogLevel { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

/// The level set by BRAID_DEBUG (read once).
LogLevel logLevel();

/// Sets the rank shown in this thread's log lines (-1: unknown).
void setLogRank(int rank);

/// printf-style; does nothing when `level` is above logLevel().
void logf(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace braid

#define BRAID_WARN(...) ::braid::logf(::braid::LogLevel::kWarn, __VA_ARGS__)
#define BRAID_INFO(...) ::braid::logf(::braid::LogLevel::kInfo, __VA_ARGS__)
#define BRAID_TRACE(...) ::braid::logf(::braid::LogLevel::kTrace, __VA_ARGS__)
