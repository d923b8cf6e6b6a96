#include "core/net/socket_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace braid::transport::socket {
namespace {

bool isRetryable(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }

bool startsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

bool isIpv6LinkLocal(const SocketAddress& a) {
  if (a.family() != AF_INET6) return false;
  return IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<const sockaddr_in6*>(&a.storage)->sin6_addr);
}

// Among `candidates` (in getifaddrs order), the first IPv4 one, else the first.
const NetworkInterface* preferIpv4(const std::vector<const NetworkInterface*>& candidates) {
  for (const NetworkInterface* c : candidates) {
    if (c->address.family() == AF_INET) return c;
  }
  return candidates.empty() ? nullptr : candidates.front();
}

// A fresh non-blocking, close-on-exec TCP socket for `family` with `options`.
Result<Fd> newSocket(int family, const SocketOptions& options) {
  Fd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return systemError("socket", errno);
  BRAID_RETURN_IF_ERROR(applySocketOptions(fd.get(), options));
  return fd;
}

}  // namespace

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

int SocketAddress::port() const {
  if (family() == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
}

void SocketAddress::setPort(int port) {
  uint16_t net = htons(static_cast<uint16_t>(port));
  if (family() == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = net;
  } else {
    reinterpret_cast<sockaddr_in*>(&storage)->sin_port = net;
  }
}

bool SocketAddress::isLoopback() const {
  if (family() == AF_INET6) {
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr);
  }
  uint32_t ip = ntohl(reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr.s_addr);
  return (ip >> 24) == 127;
}

bool SocketAddress::sameIp(const SocketAddress& other) const {
  if (family() != other.family()) return false;
  if (family() == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&storage);
    const auto* b = reinterpret_cast<const sockaddr_in6*>(&other.storage);
    return std::memcmp(&a->sin6_addr, &b->sin6_addr, sizeof(a->sin6_addr)) == 0;
  }
  return reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr.s_addr ==
         reinterpret_cast<const sockaddr_in*>(&other.storage)->sin_addr.s_addr;
}

std::string SocketAddress::toString() const {
  char host[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, host,
              sizeof(host));
    return std::string("[") + host + "]:" + std::to_string(port());
  }
  inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, host, sizeof(host));
  return std::string(host) + ":" + std::to_string(port());
}

Result<SocketAddress> resolveHost(const std::string& host, int port) {
  if (port < 0 || port > 65535) {
    return invalidArgument("port " + std::to_string(port) + " is out of range 0..65535");
  }
  std::string bare = host;
  if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']') {
    bare = bare.substr(1, bare.size() - 2);
  }
  if (bare.empty()) return invalidArgument("empty host name");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(bare.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr) {
    return invalidArgument("cannot resolve host '" + host + "': " + gai_strerror(rc));
  }
  SocketAddress a;
  std::memcpy(&a.storage, found->ai_addr, found->ai_addrlen);
  a.length = found->ai_addrlen;
  ::freeaddrinfo(found);
  a.setPort(port);
  return a;
}

Result<SocketAddress> parseAddress(const std::string& text) {
  size_t colon = text.rfind(':');
  // "::1" alone has colons but no port: a bare IPv6 literal must be bracketed.
  bool bareIpv6 = colon != std::string::npos && text.find(':') != colon && text[0] != '[';
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size() || bareIpv6) {
    return invalidArgument("address '" + text + "' is not host:port (IPv6: [addr]:port)");
  }
  const char* portText = text.c_str() + colon + 1;
  char* end = nullptr;
  errno = 0;
  long port = std::strtol(portText, &end, 10);
  if (*end != '\0' || errno != 0 || port < 0 || port > 65535) {
    return invalidArgument("address '" + text + "' has no valid port (0..65535)");
  }
  return resolveHost(text.substr(0, colon), static_cast<int>(port));
}

Result<std::vector<NetworkInterface>> listInterfaces() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return systemError("getifaddrs", errno);
  std::vector<NetworkInterface> result;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || (i->ifa_flags & IFF_UP) == 0) continue;
    int family = i->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    NetworkInterface nic;
    nic.name = i->ifa_name;
    nic.address.length = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    std::memcpy(&nic.address.storage, i->ifa_addr, nic.address.length);
    nic.address.setPort(0);
    if (isIpv6LinkLocal(nic.address)) continue;
    result.push_back(std::move(nic));
  }
  ::freeifaddrs(list);
  return result;
}

Result<NetworkInterface> selectInterface(const std::string& spec) {
  BRAID_ASSIGN_OR_RETURN(std::vector<NetworkInterface> all, listInterfaces());
  std::vector<const NetworkInterface*> matches;
  std::vector<const NetworkInterface*> fallbacks;
  for (const NetworkInterface& nic : all) {
    bool loopback = nic.address.isLoopback();
    if (spec.empty()) {
      // Container bridges are local to this host, like loopback.
      bool local = loopback || startsWith(nic.name, "docker") || startsWith(nic.name, "virbr");
      (local ? fallbacks : matches).push_back(&nic);
    } else if (spec[0] == '=') {
      if (nic.name == spec.substr(1)) matches.push_back(&nic);
    } else if (spec[0] == '^') {
      if (!loopback && !startsWith(nic.name, spec.substr(1))) matches.push_back(&nic);
    } else if (startsWith(nic.name, spec)) {
      matches.push_back(&nic);
    }
  }
  // Host-local interfaces only when nothing else exists: other hosts cannot reach them.
  if (matches.empty() && spec.empty()) matches = fallbacks;
  // Every address of the first matching interface, so IPv4 wins within it.
  std::vector<const NetworkInterface*> firstName;
  for (const NetworkInterface* m : matches) {
    if (m->name == matches.front()->name) firstName.push_back(m);
  }
  const NetworkInterface* chosen = preferIpv4(firstName);
  if (chosen == nullptr) {
    std::string names;
    for (const NetworkInterface& nic : all) names += (names.empty() ? "" : ", ") + nic.name;
    return invalidArgument("BRAID_SOCKET_IFNAME='" + spec +
                           "' matches no interface that is up with an IP address (have: " + names +
                           ")");
  }
  return *chosen;
}

Result<SocketAddress> localAddressTowards(const SocketAddress& remote) {
  // connect() on a UDP socket only consults the routing table.
  Fd fd(::socket(remote.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return systemError("socket", errno);
  if (::connect(fd.get(), remote.get(), remote.length) != 0) {
    return systemError("no route to " + remote.toString(), errno);
  }
  BRAID_ASSIGN_OR_RETURN(SocketAddress local, localAddress(fd.get()));
  local.setPort(0);
  return local;
}

Result<SocketAddress> localAddress(int fd) {
  SocketAddress a;
  a.length = sizeof(a.storage);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a.storage), &a.length) != 0) {
    return systemError("getsockname", errno);
  }
  return a;
}

Status setNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return systemError("fcntl(O_NONBLOCK)", errno);
  }
  return Status::ok();
}

Status applySocketOptions(int fd, const SocketOptions& options) {
  auto set = [fd](int level, int name, int value, const char* what) -> Status {
    if (::setsockopt(fd, level, name, &value, sizeof(value)) != 0) {
      return systemError(std::string("setsockopt(") + what + ")", errno);
    }
    return Status::ok();
  };
  auto clampToInt = [](size_t v) { return static_cast<int>(std::min<size_t>(v, INT_MAX)); };
  if (options.noDelay) BRAID_RETURN_IF_ERROR(set(IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY"));
  if (options.sendBufferBytes > 0) {
    BRAID_RETURN_IF_ERROR(
        set(SOL_SOCKET, SO_SNDBUF, clampToInt(options.sendBufferBytes), "SO_SNDBUF"));
  }
  if (options.recvBufferBytes > 0) {
    BRAID_RETURN_IF_ERROR(
        set(SOL_SOCKET, SO_RCVBUF, clampToInt(options.recvBufferBytes), "SO_RCVBUF"));
  }
  return Status::ok();
}

Result<Listener> listenOn(const SocketAddress& address, const SocketOptions& options, int backlog) {
  BRAID_ASSIGN_OR_RETURN(Fd fd, newSocket(address.family(), options));
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd.get(), address.get(), address.length) != 0) {
    return systemError("bind " + address.toString(), errno);
  }
  if (::listen(fd.get(), backlog) != 0) return systemError("listen " + address.toString(), errno);
  BRAID_ASSIGN_OR_RETURN(SocketAddress bound, localAddress(fd.get()));
  return Listener{std::move(fd), bound};
}

Result<Fd> connectTo(const SocketAddress& address, const SocketOptions& options,
                     const Deadline& deadline) {
  const std::string what = "connecting to " + address.toString();
  int backoffMs = 1;
  while (true) {
    BRAID_ASSIGN_OR_RETURN(Fd fd, newSocket(address.family(), options));
    int err = ::connect(fd.get(), address.get(), address.length) == 0 ? 0 : errno;
    if (err == EINPROGRESS || err == EINTR) {
      BRAID_RETURN_IF_ERROR(waitForFd(fd.get(), POLLOUT, deadline, what));
      socklen_t len = sizeof(err);
      ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    }
    if (err == 0) return fd;
    if (err != ECONNREFUSED && err != ETIMEDOUT && err != ECONNRESET && err != EAGAIN) {
      return systemError(what, err);
    }
    if (deadline.expired()) {
      return timeoutError("timed out " + what + ": " + std::strerror(err));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(deadline.remainingMs(backoffMs)));
    backoffMs = std::min(backoffMs * 2, 100);
  }
}

Result<Fd> tryAccept(int listenFd) {
  while (true) {
    Fd fd(::accept4(listenFd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (fd.valid()) return fd;
    // A connection that was reset while queued is not this listener's failure.
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Fd();
    return systemError("accept", errno);
  }
}

Result<Fd> acceptOne(int listenFd, const Deadline& deadline) {
  while (true) {
    BRAID_ASSIGN_OR_RETURN(Fd fd, tryAccept(listenFd));
    if (fd.valid()) return fd;
    BRAID_RETURN_IF_ERROR(waitForFd(listenFd, POLLIN, deadline, "waiting for a connection"));
  }
}

Status waitForFd(int fd, short events, const Deadline& deadline, const std::string& what) {
  while (true) {
    if (deadline.expired()) return timeoutError("timed out " + what);
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, deadline.remainingMs(1000));
    if (rc < 0 && errno != EINTR) return systemError("poll while " + what, errno);
    // POLLERR / POLLHUP also return: the next send/recv reports the precise error.
    if (rc > 0) return Status::ok();
  }
}

Status sendAll(int fd, const void* data, size_t bytes, const Deadline& deadline) {
  size_t sent = 0;
  while (sent < bytes) {
    iovec iov{const_cast<uint8_t*>(static_cast<const uint8_t*>(data)) + sent, bytes - sent};
    BRAID_ASSIGN_OR_RETURN(IoResult r, sendSome(fd, &iov, 1));
    sent += r.bytes;
    if (r.bytes == 0) BRAID_RETURN_IF_ERROR(waitForFd(fd, POLLOUT, deadline, "sending"));
  }
  return Status::ok();
}

Status recvAll(int fd, void* data, size_t bytes, const Deadline& deadline) {
  size_t received = 0;
  while (received < bytes) {
    BRAID_ASSIGN_OR_RETURN(IoResult r,
                           recvSome(fd, static_cast<uint8_t*>(data) + received, bytes - received));
    if (r.closed) {
      return Status(braidRemoteError, "connection closed by the peer after " +
                                          std::to_string(received) + " of " +
                                          std::to_string(bytes) + " bytes");
    }
    received += r.bytes;
    if (r.bytes == 0) BRAID_RETURN_IF_ERROR(waitForFd(fd, POLLIN, deadline, "receiving"));
  }
  return Status::ok();
}

Result<IoResult> sendSome(int fd, const iovec* iov, int iovCount) {
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov);
  msg.msg_iovlen = iovCount;
  while (true) {
    ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return IoResult{static_cast<size_t>(n), false};
    if (errno == EINTR) continue;
    if (isRetryable(errno)) return IoResult{};
    return Status(braidRemoteError, std::string("send failed: ") + std::strerror(errno));
  }
}

Status recvError(int err) {
  const char* why = nullptr;
  switch (err) {
    case EBADMSG:
      why = "kernel TLS: the record failed authentication (EBADMSG)";
      break;
    case EMSGSIZE:
      why = "kernel TLS: the record is longer than TLS allows (EMSGSIZE)";
      break;
    case EKEYEXPIRED:
      why = "kernel TLS: the peer updated its keys, which braid never asks for (EKEYEXPIRED)";
      break;
    default:
      return Status(braidRemoteError, std::string("recv failed: ") + std::strerror(err));
  }
  return Status(braidRemoteError, std::string(kRejectedRecord) + why);
}

Result<IoResult> recvSome(int fd, void* data, size_t bytes) {
  while (true) {
    ssize_t n = ::recv(fd, data, bytes, MSG_DONTWAIT);
    if (n > 0) return IoResult{static_cast<size_t>(n), false};
    if (n == 0) return IoResult{0, bytes > 0};
    if (errno == EINTR) continue;
    if (isRetryable(errno)) return IoResult{};
    return recvError(errno);
  }
}

Result<IoResult> recvSomeV(int fd, const iovec* iov, int iovCount) {
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov);
  msg.msg_iovlen = iovCount;
  size_t bytes = 0;
  for (int i = 0; i < iovCount; ++i) bytes += iov[i].iov_len;
  while (true) {
    ssize_t n = ::recvmsg(fd, &msg, MSG_DONTWAIT);
    if (n > 0) return IoResult{static_cast<size_t>(n), false};
    if (n == 0) return IoResult{0, bytes > 0};
    if (errno == EINTR) continue;
    if (isRetryable(errno)) return IoResult{};
    return recvError(errno);
  }
}

bool shutDownHere(int fd) {
  tcp_info info{};
  socklen_t length = sizeof(info);
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return false;
  switch (info.tcpi_state) {
    case TCP_FIN_WAIT1:
    case TCP_FIN_WAIT2:
    case TCP_CLOSING:
    case TCP_TIME_WAIT:
      return true;
    default:
      return false;
  }
}

}  // namespace braid::transport::socket
