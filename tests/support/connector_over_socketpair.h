// One socket connector, rank 0's to rank 1, over a Unix socketpair whose other end the
// test holds and reads or writes in the wire format itself (socket_wire.h): for tests of
// what the connector puts on a stream and takes off it.
#pragma once

#include <memory>

#include "core/net/socket_util.h"
#include "core/status.h"
#include "transports/socket/socket_connector.h"

namespace braid::testing {

struct ConnectorOverSocketPair {
  static constexpr int kRank = 0, kPeer = 1;

  transport::socket::AbortState abort;
  transport::socket::Fd theirs;  // the peer's end, non-blocking
  std::unique_ptr<transport::socket::SocketConnector> conn;

  /// `nranks`: the communicator's size the connector is told (>= 2).
  explicit ConnectorOverSocketPair(int nranks);

  /// One progress call of the connector.
  Status pump();
};

}  // namespace braid::testing
