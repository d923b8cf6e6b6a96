// What a process holds that braid could leak: open file descriptors and
// threads, counted from /proc/self. A rank takes a census before it creates
// its first communicator and again after it released the last one; the two
// must match. Threads that end on their own (a bootstrap root serving its
// last rank) may take a moment to go, so settle() waits a bounded while.
#pragma once

#include <string>

namespace braid::testing {

struct Census {
  int fds = 0;
  int threads = 0;
  std::string describe() const;
};

/// This process's open descriptors and threads now.
Census takeCensus();

/// A field of /proc/self/status in KiB ("VmRSS", "RssAnon", "RssShmem"); -1 when unreadable.
long residentKiB(const char* field = "VmRSS");

/// Polls until the census equals `before` or `seconds` pass; returns the last one.
Census settle(const Census& before, double seconds);

/// shutdown()s every connected TCP socket of this process (not listeners),
/// as a cut cable would: the process's peers read EOF, its own reads fail.
/// Returns how many sockets were cut.
int cutTcpConnections();

}  // namespace braid::testing
