#include "bootstrap/tcp.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace braid::bootstrap {

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
