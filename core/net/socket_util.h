// Reusable TCP helpers: addresses, interface choice, listen / connect / accept
// with deadlines, socket options, and transfer loops.
//
// Conventions shared by every function here:
//  - every descriptor they create is non-blocking and close-on-exec, so the
//    same socket serves a blocking-with-deadline phase (setup) and a
//    non-blocking progress engine afterwards;
//  - the *All() helpers wait with poll() and honour a Deadline; EINTR is
//    retried everywhere;
//  - writes use MSG_NOSIGNAL: a vanished peer is a Status, never a SIGPIPE.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"

namespace braid::transport::socket {

/// An owned file descriptor, closed on destruction.
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
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

/// An IPv4 or IPv6 socket address; trivially copyable, so it can travel as bytes.
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int family() const { return storage.ss_family; }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  int port() const;
  void setPort(int port);
  bool isLoopback() const;
  /// The same family and IP address (ports may differ).
  bool sameIp(const SocketAddress& other) const;
  /// "1.2.3.4:5678" or "[::1]:5678".
  std::string toString() const;
};

/// Resolves `host` (a name or an IPv4/IPv6 literal, brackets allowed) with `port`.
Result<SocketAddress> resolveHost(const std::string& host, int port);

/// Parses "host:port", "1.2.3.4:port" or "[v6]:port".
Result<SocketAddress> parseAddress(const std::string& text);

struct NetworkInterface {
  std::string name;       // "eth0"
  SocketAddress address;  // port 0
};

/// Interfaces that are up and carry an IPv4 or a routable IPv6 address (IPv6
/// link-local addresses are skipped: they need a scope id peers cannot use).
Result<std::vector<NetworkInterface>> listInterfaces();

/// Picks the interface to listen on (BRAID_SOCKET_IFNAME semantics):
///   ""        the first interface that is not loopback, docker* or virbr* (IPv4
///             preferred), else the first of those;
///   "eth"     the first interface whose name starts with "eth" (loopback too if asked);
///   "=eth0"   exactly "eth0";
///   "^docker" the first non-loopback interface whose name does not start with "docker".
Result<NetworkInterface> selectInterface(const std::string& spec);

/// The local address the kernel would use to reach `remote` (sends no packet).
Result<SocketAddress> localAddressTowards(const SocketAddress& remote);

/// The local address a socket is bound to (getsockname).
Result<SocketAddress> localAddress(int fd);

struct SocketOptions {
  bool noDelay = true;         // TCP_NODELAY: small messages leave at once
  size_t sendBufferBytes = 0;  // SO_SNDBUF; 0 keeps the kernel's autotuning
  size_t recvBufferBytes = 0;  // SO_RCVBUF; 0 keeps the kernel's autotuning
};

Status setNonBlocking(int fd);
/// Applies `options`; buffer sizes should be set before connect/listen so the
/// TCP window scale is negotiated for them.
Status applySocketOptions(int fd, const SocketOptions& options);

struct Listener {
  Fd fd;
  SocketAddress address;  // the bound address, with the port the kernel picked
};

/// Binds to `address` (port 0: an ephemeral port) and listens.
Result<Listener> listenOn(const SocketAddress& address, const SocketOptions& options,
                          int backlog = SOMAXCONN);

/// Connects to `address` before `deadline`, retrying refused connections (the
/// listener may not be up yet).
Result<Fd> connectTo(const SocketAddress& address, const SocketOptions& options,
                     const Deadline& deadline);

/// One pending connection, or an invalid Fd when none is waiting.
Result<Fd> tryAccept(int listenFd);

/// Waits for one connection before `deadline`.
Result<Fd> acceptOne(int listenFd, const Deadline& deadline);

/// Waits until `fd` is ready for `events` (POLLIN / POLLOUT) or `deadline` passes
/// (a timeout error mentioning `what`).
Status waitForFd(int fd, short events, const Deadline& deadline, const std::string& what);

/// Sends / receives exactly `bytes`, waiting as needed until `deadline`.
/// A peer that closes before the end is a braidRemoteError.
Status sendAll(int fd, const void* data, size_t bytes, const Deadline& deadline);
Status recvAll(int fd, void* data, size_t bytes, const Deadline& deadline);

/// The outcome of one non-blocking transfer attempt. bytes == 0 without
/// `closed` means the kernel buffer was full (send) or empty (recv).
struct IoResult {
  size_t bytes = 0;
  bool closed = false;  // recv only: the peer closed its end (EOF)
};

/// One non-blocking sendmsg of the iovecs; a reset or closed peer is an error.
Result<IoResult> sendSome(int fd, const iovec* iov, int iovCount);

/// How the error of a receive begins when a TLS record failed its checks (tls.h's
/// isRejectedRecord): libssl rejected it, or kernel TLS did (recvError).
inline constexpr std::string_view kRejectedRecord = "a record was rejected: ";

/// The error of a recv/recvmsg that failed with `err`. Where kernel TLS does a stream's
/// receives, the kernel reports a record that fails authentication as EBADMSG, one
/// longer than TLS allows as EMSGSIZE, and a peer's key update (which braid never asks
/// for) as EKEYEXPIRED: each is a rejected record (kRejectedRecord) naming the errno,
/// never taken for a peer that left.
Status recvError(int err);

/// One non-blocking recv; EOF is reported as `closed`, a reset as an error.
Result<IoResult> recvSome(int fd, void* data, size_t bytes);

/// recvSome scattering into the iovecs, in order (one system call for a
/// payload's end and the header after it).
Result<IoResult> recvSomeV(int fd, const iovec* iov, int iovCount);

/// True when this end of TCP connection `fd` sent its FIN first, i.e. the
/// connection was shut down on this side, not closed by the peer (whose
/// close leaves this end in CLOSE_WAIT). False for anything else.
bool shutDownHere(int fd);

}  // namespace braid::transport::socket
