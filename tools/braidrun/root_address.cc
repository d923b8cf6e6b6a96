#include "braidrun/root_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "braidrun/unique_fd.h"

namespace braid::run {

bool isLocalHost(const std::string& host) {
  if (host == "localhost" || host.rfind("127.", 0) == 0) return true;
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return false;
  const std::string full = name;
  const std::string shortName = full.substr(0, full.find('.'));
  return host == full || host == shortName;
}

bool routeSourceAddress(const std::string& host, std::string* address, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), "9", &hints, &found);
  if (rc != 0 || found == nullptr) {
    *error = "cannot resolve host '" + host + "': " + ::gai_strerror(rc);
    return false;
  }
  // Connecting a datagram socket sends nothing; it only makes the kernel pick the
  // route, whose source address getsockname then reports.
  UniqueFd probe(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  const bool ok = probe.valid() && ::connect(probe.get(), found->ai_addr, found->ai_addrlen) == 0 &&
                  ::getsockname(probe.get(), reinterpret_cast<sockaddr*>(&local), &len) == 0;
  const int err = errno;
  ::freeaddrinfo(found);
  char text[INET_ADDRSTRLEN] = {};
  if (!ok || ::inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text)) == nullptr) {
    *error = "no route to host '" + host + "': " + std::strerror(err);
    return false;
  }
  *address = text;
  return true;
}

}  // namespace braid::run
