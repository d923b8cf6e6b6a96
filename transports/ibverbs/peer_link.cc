// Abort notices and hang-ups on the ib transport's side connections (see peer_link.h).
// Wire: a NoticeHeader, then `length` bytes of reason text.
#include "transports/ibverbs/peer_link.h"

#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "transports/failure_report.h"

namespace braid::transport::ib {
namespace {

constexpr uint32_t kNoticeMagic = 0x4e424962;  // "bIBN"
constexpr size_t kMaxReason = 1024;

struct NoticeHeader {
  uint32_t magic;
  int32_t origin;
  uint32_t length;
};

std::string printable(std::string s) {
  for (char& c : s) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return s;
}

}  // namespace

Status PeerLink::check(bool expecting) {
  if (!notice_.isOk()) return notice_;
  while (!closed_) {
    char buf[512];
    Result<socket::IoResult> r = socket::recvSome(fd_.get(), buf, sizeof buf);
    if (!r.isOk() || r->closed) {
      closed_ = true;
      break;
    }
    if (r->bytes == 0) break;
    in_.append(buf, r->bytes);
  }
  if (in_.size() >= sizeof(NoticeHeader)) {
    NoticeHeader h;
    std::memcpy(&h, in_.data(), sizeof h);
    if (h.magic != kNoticeMagic) {
      notice_ = remoteError(
          "ib transport: rank " + std::to_string(peer_) + " sent garbage on its side connection",
          peer_);
      return notice_;
    }
    const size_t length = std::min<size_t>(h.length, kMaxReason);
    if (in_.size() >= sizeof h + length || closed_) {
      const std::string why =
          printable(in_.substr(sizeof h, std::min(length, in_.size() - sizeof h)));
      const std::string reporter = "rank " + std::to_string(peer_);
      std::string what;
      if (h.origin == peer_) {
        what = reporter + " failed: " + why;
      } else if (h.origin == rank_) {
        what = reporter + " blames this rank (" + std::to_string(rank_) + "): " + why;
      } else {
        what = "rank " + std::to_string(h.origin) + " failed " + kReportedByMarker +
               std::to_string(peer_) + "): " + why;
      }
      notice_ = remoteError(what, h.origin);
      return notice_;
    }
  }
  if (closed_ && expecting) {
    if (socket::shutDownHere(fd_.get())) {
      return remoteError("ib transport: the side connection to rank " + std::to_string(peer_) +
                             " was shut down on this rank (" + std::to_string(rank_) + ")",
                         rank_);
    }
    return remoteError("ib transport: rank " + std::to_string(peer_) +
                           " closed its connection while rank " + std::to_string(rank_) +
                           " still expected data from it; rank " + std::to_string(peer_) +
                           " may have failed or aborted",
                       peer_);
  }
  return Status::ok();
}

void PeerLink::sendNotice(int origin, const std::string& reason) {
  const std::string text = reason.substr(0, kMaxReason);
  NoticeHeader h{kNoticeMagic, origin, static_cast<uint32_t>(text.size())};
  std::string wire(reinterpret_cast<const char*>(&h), sizeof h);
  wire += text;
  (void)::send(fd_.get(), wire.data(), wire.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

void PeerLink::shutdown() { ::shutdown(fd_.get(), SHUT_RDWR); }

}  // namespace braid::transport::ib
