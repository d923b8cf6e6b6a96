#include "support/connector_over_socketpair.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <utility>
#include <vector>

namespace braid::testing {

using transport::socket::Fd;
using transport::socket::SocketConnector;

ConnectorOverSocketPair::ConnectorOverSocketPair(int nranks) {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  std::vector<Fd> mine;
  mine.emplace_back(fds[0]);
  theirs = Fd(fds[1]);
  conn = std::make_unique<SocketConnector>(kRank, kPeer, nranks, std::move(mine), &abort);
}

Status ConnectorOverSocketPair::pump() {
  bool progressed = false;
  return conn->progress(&progressed);
}

}  // namespace braid::testing
