#include "transports/socket/congestion.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "core/log.h"

namespace braid::transport::socket {
namespace {

// The IP address of a socket's end (port left out); empty when it has none.
std::string addressBytes(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(address);
    return std::string(reinterpret_cast<const char*>(&in.sin_addr), sizeof(in.sin_addr));
  }
  if (address.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
    return std::string(reinterpret_cast<const char*>(&in6.sin6_addr), sizeof(in6.sin6_addr));
  }
  return {};
}

}  // namespace

std::string congestionFor(const std::string& setting, bool sameHost) {
  if (setting == "system") return {};
  if (setting.empty() || setting == "auto") return sameHost ? kSameHostCongestion : "";
  return setting;
}

bool sameHostStream(int fd) {
  sockaddr_storage local{}, peer{};
  socklen_t localLength = sizeof(local), peerLength = sizeof(peer);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &localLength) != 0 ||
      ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peerLength) != 0) {
    return false;
  }
  const std::string mine = addressBytes(local);
  return !mine.empty() && local.ss_family == peer.ss_family && mine == addressBytes(peer);
}

Status applyCongestionControl(int fd, const std::string& setting) {
  const std::string name = congestionFor(setting, sameHostStream(fd));
  if (name.empty()) return Status::ok();
  if (::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.data(),
                   static_cast<socklen_t>(name.size())) == 0) {
    return Status::ok();
  }
  const int error = errno;
  if (setting.empty() || setting == "auto") {
    BRAID_INFO("socket transport: congestion control %s refused (%s); the system's default stays",
               name.c_str(), std::strerror(error));
    return Status::ok();
  }
  return invalidArgument("BRAID_SOCKET_CONGESTION='" + setting +
                         "': the kernel refused it on a socket stream (" + std::strerror(error) +
                         "); /proc/sys/net/ipv4/tcp_allowed_congestion_control lists what "
                         "a process may choose");
}

}  // namespace braid::transport::socket
