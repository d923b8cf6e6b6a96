#include "transports/socket/congestion_switch.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "core/log.h"

namespace braid::transport::socket {

bool switchesPerMessage(const std::string& setting, bool sameHost) {
  return sameHost && (setting.empty() || setting == "auto");
}

const char* congestionForMessage(size_t bytes, const char* shortName) {
  if (bytes < kPerMessageMinBytes) return nullptr;
  return bytes < kLongMessageBytes ? shortName : kSameHostCongestion;
}

void CongestionSwitch::beforeMessage(int fd, size_t bytes) {
  if (!on_) return;
  const char* want = congestionForMessage(bytes, shortName_);
  if (want == nullptr || std::strcmp(want, current_) == 0) return;
  if (::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, want,
                   static_cast<socklen_t>(std::strlen(want))) == 0) {
    current_ = want;
    return;
  }
  // Only the short-message algorithm can be refused (reno is always there): the
  // stream keeps reno, as it would without switching.
  BRAID_INFO("socket transport: congestion control %s refused (%s); the stream stays on %s", want,
             std::strerror(errno), current_);
  on_ = false;
}

}  // namespace braid::transport::socket
