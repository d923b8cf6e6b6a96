// A connected TCP pair over 127.0.0.1 inside one process, for tests that look at what
// the kernel reports about a real stream (socket options such as TCP_CONGESTION) or
// that run two connectors over it.
#pragma once

#include <string>

#include "core/net/socket_util.h"

namespace braid::testing {

/// ends[0] is the connecting end, ends[1] the accepted one.
struct LoopbackPair {
  transport::socket::Fd ends[2];
};

/// A fresh pair; both ends non-blocking when `nonBlocking` (as the socket transport's are).
/// A failed step is a test failure, and the ends are then invalid.
LoopbackPair connectLoopback(bool nonBlocking = false);

/// The congestion control algorithm the kernel reports for stream `fd`.
std::string congestionOf(int fd);

}  // namespace braid::testing
