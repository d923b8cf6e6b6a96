// Connection setup for the socket transport: from a bootstrap to `streams`
// authenticated TCP connections per peer.
#pragma once

#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/deadline.h"
#include "core/status.h"
#include "transports/socket/socket_util.h"

namespace braid::transport::socket {

struct SetupOptions {
  std::string ifname;  // BRAID_SOCKET_IFNAME spec (see selectInterface)
  int streams = 1;     // connections per peer; every rank must use the same
  SocketOptions socketOptions;
  Deadline deadline;
};

/// Connects this rank to every other rank. Returns, indexed by peer rank,
/// `options.streams` connected non-blocking sockets ordered by stream index
/// (an empty vector for this rank). Collective: every rank must call it.
Result<std::vector<std::vector<Fd>>> connectPeers(Bootstrap& bootstrap,
                                                  const SetupOptions& options);

}  // namespace braid::transport::socket
