// The bootstrap's view of TCP: the socket helpers of the socket transport,
// plus the one exchange the ring needs.
#pragma once

#include <cstddef>

#include "core/deadline.h"
#include "core/net/socket_util.h"
#include "core/status.h"

namespace braid::bootstrap {

using transport::socket::Fd;
using SockAddr = transport::socket::SocketAddress;

/// Sends on one socket while receiving on another, so a ring of ranks that all
/// send before they receive cannot deadlock on full socket buffers.
Status sendRecv(int sendFd, const void* sendData, size_t sendBytes, int recvFd, void* recvData,
                size_t recvBytes, const Deadline& deadline);

}  // namespace braid::bootstrap
