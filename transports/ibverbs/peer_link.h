// A TCP connection to each peer beside its queue pair, for failures only.
//
// A reliable-connected queue pair reports a dead peer only when this rank
// sends to it (retries run out); a rank that only waits to receive would wait
// until BRAID_TIMEOUT. The socket tells at once: the peer's kernel closes it
// when the process dies. It also carries abort notices, so every survivor
// names the rank that failed first, as the socket transport's do.
#pragma once

#include <string>

#include "core/net/socket_util.h"
#include "core/status.h"

namespace braid::transport::ib {

class PeerLink {
 public:
  PeerLink(int rank, int peer, socket::Fd fd) : rank_(rank), peer_(peer), fd_(std::move(fd)) {}

  int fd() const { return fd_.get(); }
  /// Reads what arrived without blocking. An error when the peer sent an abort notice,
  /// or closed the connection while `expecting` (this rank awaits something from it).
  Status check(bool expecting);
  /// Best effort, never blocks: a notice naming `origin`, the rank at fault, with `reason`.
  void sendNotice(int origin, const std::string& reason);
  /// shutdown(SHUT_RDWR): the peer reads EOF; local waiters polling fd() wake.
  void shutdown();

 private:
  const int rank_;
  const int peer_;
  socket::Fd fd_;
  std::string in_;  // notice bytes read so far
  bool closed_ = false;
  Status notice_;
};

}  // namespace braid::transport::ib
