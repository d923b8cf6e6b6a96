// The bootstrap's view of TCP: the socket helpers it shares with the socket transport
// (core/net/socket_util.h), under the bootstrap's names.
#pragma once

#include "core/net/socket_util.h"

namespace braid::bootstrap {

using transport::socket::Fd;
using SockAddr = transport::socket::SocketAddress;

}  // namespace braid::bootstrap
