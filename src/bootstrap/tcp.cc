#include "bootstrap/tcp.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace braid::bootstrap {
namespace {

Status waitFor(int fd, short events, const Deadline& deadline, const char* what) {
  while (true) {
    if (deadline.expired()) return timeoutError(std::string("bootstrap: timed out ") + what);
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, deadline.remainingMs(1000));
    if (rc < 0 && errno != EINTR) return systemError(std::string("bootstrap: poll ") + what, errno);
    if (rc > 0) {
      if (p.revents & (POLLERR | POLLNVAL)) {
        return Status(braidRemoteError, std::string("bootstrap: socket error ") + what);
      }
      return Status::ok();
    }
  }
}

void setNonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

int SockAddr::port() const {
  if (storage.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
}

void SockAddr::setPort(int port) {
  if (storage.ss_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(static_cast<uint16_t>(port));
  } else {
    reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(static_cast<uint16_t>(port));
  }
}

std::string SockAddr::toString() const {
  char host[INET6_ADDRSTRLEN] = "?";
  if (storage.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, host,
              sizeof(host));
    return std::string("[") + host + "]:" + std::to_string(port());
  }
  inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, host, sizeof(host));
  return std::string(host) + ":" + std::to_string(port());
}

Result<SockAddr> resolve(const std::string& host, int port) {
  if (port < 0 || port > 65535) {
    return invalidArgument("port " + std::to_string(port) + " is out of range");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr) {
    return invalidArgument("cannot resolve host '" + host + "': " + gai_strerror(rc));
  }
  SockAddr a;
  std::memcpy(&a.storage, found->ai_addr, found->ai_addrlen);
  a.length = found->ai_addrlen;
  ::freeaddrinfo(found);
  a.setPort(port);
  return a;
}

Result<SockAddr> parseHostPort(const std::string& text) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) {
    return invalidArgument("address '" + text + "' is not host:port");
  }
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  char* end = nullptr;
  long port = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port <= 0 || port > 65535) {
    return invalidArgument("address '" + text + "' has no valid port");
  }
  return resolve(host, static_cast<int>(port));
}

Result<Fd> listenOn(const SockAddr& address, SockAddr* bound) {
  Fd fd(::socket(address.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return systemError("bootstrap: socket", errno);
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address.storage), address.length) != 0) {
    return systemError("bootstrap: bind " + address.toString(), errno);
  }
  if (::listen(fd.get(), 1024) != 0) return systemError("bootstrap: listen", errno);
  setNonBlocking(fd.get());
  if (bound != nullptr) {
    bound->length = sizeof(bound->storage);
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound->storage), &bound->length);
  }
  return fd;
}

Result<Fd> connectTo(const SockAddr& address, const Deadline& deadline) {
  int backoffMs = 1;
  while (true) {
    Fd fd(::socket(address.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) return systemError("bootstrap: socket", errno);
    int rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address.storage),
                       address.length);
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      BRAID_RETURN_IF_ERROR(waitFor(fd.get(), POLLOUT, deadline,
                                    ("connecting to " + address.toString()).c_str()));
      socklen_t len = sizeof(err);
      ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    }
    if (err == 0) {
      int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      return fd;
    }
    if (err != ECONNREFUSED && err != ETIMEDOUT && err != ECONNRESET && err != EAGAIN) {
      return systemError("bootstrap: connect to " + address.toString(), err);
    }
    if (deadline.expired()) {
      return timeoutError("bootstrap: nobody listens at " + address.toString() +
                          " (is rank 0 running, and is BRAID_TIMEOUT long enough?)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(deadline.remainingMs(backoffMs)));
    backoffMs = backoffMs < 100 ? backoffMs * 2 : 100;
  }
}

Result<Fd> acceptOne(int listenFd, const Deadline& deadline) {
  while (true) {
    Fd fd(::accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (fd.valid()) {
      int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      return fd;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) {
      return systemError("bootstrap: accept", errno);
    }
    BRAID_RETURN_IF_ERROR(waitFor(listenFd, POLLIN, deadline, "waiting for peers to connect"));
  }
}

Result<SockAddr> localAddress(int fd) {
  SockAddr a;
  a.length = sizeof(a.storage);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a.storage), &a.length) != 0) {
    return systemError("bootstrap: getsockname", errno);
  }
  return a;
}

Status sendAll(int fd, const void* data, size_t bytes, const Deadline& deadline) {
  return sendRecv(fd, data, bytes, -1, nullptr, 0, deadline);
}

Status recvAll(int fd, void* data, size_t bytes, const Deadline& deadline) {
  return sendRecv(-1, nullptr, 0, fd, data, bytes, deadline);
}

Status sendRecv(int sendFd, const void* sendData, size_t sendBytes, int recvFd, void* recvData,
                size_t recvBytes, const Deadline& deadline) {
  size_t sent = 0, received = 0;
  auto* out = static_cast<const uint8_t*>(sendData);
  auto* in = static_cast<uint8_t*>(recvData);
  while (sent < sendBytes || received < recvBytes) {
    pollfd fds[2];
    int n = 0;
    if (sent < sendBytes) fds[n++] = {sendFd, POLLOUT, 0};
    if (received < recvBytes) fds[n++] = {recvFd, POLLIN, 0};
    if (deadline.expired()) return timeoutError("bootstrap: a peer did not answer in time");
    int rc = ::poll(fds, n, deadline.remainingMs(1000));
    if (rc < 0 && errno != EINTR) return systemError("bootstrap: poll", errno);
    if (rc <= 0) continue;
    for (int i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      ssize_t k;
      if (fds[i].events == POLLOUT) {
        k = ::send(sendFd, out + sent, sendBytes - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) sent += k;
      } else {
        k = ::recv(recvFd, in + received, recvBytes - received, MSG_DONTWAIT);
        if (k > 0) received += k;
        if (k == 0) return Status(braidRemoteError, "bootstrap: a peer closed its connection");
      }
      if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return Status(braidRemoteError,
                      std::string("bootstrap: connection failed: ") + std::strerror(errno));
      }
    }
  }
  return Status::ok();
}

}  // namespace braid::bootstrap
