// Small blocking-with-deadline TCP helpers for the bootstrap network.
//
// The bootstrap moves a few hundred bytes per rank at init, so it favours
// plain code over speed: every call takes a Deadline, retries EINTR, and
// turns failures into a Status naming what was being done.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <string>

#include "core/deadline.h"
#include "core/status.h"

namespace braid::bootstrap {

/// An IPv4 or IPv6 socket address with a fixed-size wire form.
struct SockAddr {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int port() const;
  void setPort(int port);
  std::string toString() const;  // "1.2.3.4:5678" or "[::1]:5678"
};

/// Resolves "host" (name or literal) and `port` to an address.
Result<SockAddr> resolve(const std::string& host, int port);
/// Parses "host:port" or "[v6]:port".
Result<SockAddr> parseHostPort(const std::string& text);

/// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();

 private:
  int fd_ = -1;
};

/// Listens on `address` (port 0 picks a free one); *bound receives the real address.
Result<Fd> listenOn(const SockAddr& address, SockAddr* bound);
/// Connects to `address`, retrying refusals (the peer may not listen yet) until `deadline`.
Result<Fd> connectTo(const SockAddr& address, const Deadline& deadline);
/// Accepts one connection on `listenFd` before `deadline`.
Result<Fd> acceptOne(int listenFd, const Deadline& deadline);
/// The local address of a connected socket (the interface that routes to its peer).
Result<SockAddr> localAddress(int fd);

Status sendAll(int fd, const void* data, size_t bytes, const Deadline& deadline);
Status recvAll(int fd, void* data, size_t bytes, const Deadline& deadline);
/// Sends on one socket while receiving on another, so a ring of ranks that all
/// send before they receive cannot deadlock on full socket buffers.
Status sendRecv(int sendFd, const void* sendData, size_t sendBytes, int recvFd, void* recvData,
                size_t recvBytes, const Deadline& deadline);

}  // namespace braid::bootstrap
