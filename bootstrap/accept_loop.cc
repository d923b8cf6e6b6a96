// One poll() loop over the listener and every handshake in progress (see accept_loop.h).
#include "bootstrap/accept_loop.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/log.h"

namespace braid::bootstrap {

AcceptLoop::AcceptLoop(int listenFd, const uint8_t* secret, Protocol protocol, std::string who,
                       double handshakeSeconds)
    : listenFd_(listenFd),
      protocol_(protocol),
      who_(std::move(who)),
      handshakeSeconds_(handshakeSeconds) {
  std::memcpy(secret_, secret, kSecretBytes);
}

Result<Admitted> AcceptLoop::next(const Deadline& deadline) {
  std::vector<pollfd> fds;
  while (ready_.empty()) {
    if (deadline.expired()) {
      return timeoutError(who_ + ": no connection proved the secret in time (" +
                          std::to_string(rejected_) + " rejected)");
    }
    fds.assign(1, pollfd{listenFd_, POLLIN, 0});
    int waitMs = deadline.remainingMs(1000);
    for (const Pending& p : pending_) {
      bool sending = p.challengeSent < p.conn.transcript.challenge.size();
      fds.push_back(pollfd{p.conn.fd.get(), static_cast<short>(sending ? POLLOUT : POLLIN), 0});
      waitMs = std::min(waitMs, p.deadline.remainingMs(1000));
    }
    int rc = ::poll(fds.data(), fds.size(), waitMs);
    if (rc < 0 && errno != EINTR) return systemError(who_ + ": poll", errno);

    // fds[1..] follow pending_'s order; new connections are appended after this pass.
    size_t i = 1;
    for (auto it = pending_.begin(); it != pending_.end(); ++i) {
      auto current = it++;
      std::string why;
      if (rc > 0 && fds[i].revents != 0 && !step(*current, &why)) {
        drop(current, why);
      } else if (current->reader.done()) {
        ready_.push_back(std::move(current->conn));
        pending_.erase(current);
      } else if (current->deadline.expired()) {
        drop(current, "did not complete its handshake in time");
      }
    }
    if (rc > 0 && (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL))) {
      // Shut down under us (the server is stopping): polling on would spin.
      return internalError(who_ + ": the listener was closed");
    }
    if (rc > 0 && (fds[0].revents & POLLIN)) BRAID_RETURN_IF_ERROR(acceptNew());
  }
  Admitted a = std::move(ready_.front());
  ready_.pop_front();
  return a;
}

Status AcceptLoop::acceptNew() {
  while (true) {
    BRAID_ASSIGN_OR_RETURN(Fd fd, transport::socket::tryAccept(listenFd_));
    if (!fd.valid()) return Status::ok();
    if (pending_.size() >= kMaxPending) drop(pending_.begin(), "dropped to make room (flood?)");
    uint8_t nonce[wire::kNonceBytes];
    BRAID_RETURN_IF_ERROR(randomBytes(nonce, sizeof(nonce)));
    Pending p{.conn = {},
              .deadline = Deadline::in(handshakeSeconds_),
              .challengeSent = 0,
              .reader = wire::FrameReader(protocol_.hello)};
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (::getpeername(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      SockAddr peer;
      peer.storage = address;
      peer.length = length;
      p.conn.peer = peer.toString();
    }
    p.conn.fd = std::move(fd);
    p.conn.transcript.challenge = makeChallenge(protocol_, nonce);
    pending_.push_back(std::move(p));
  }
}

bool AcceptLoop::step(Pending& p, std::string* why) {
  const wire::Bytes& challenge = p.conn.transcript.challenge;
  if (p.challengeSent < challenge.size()) {
    iovec iov{const_cast<uint8_t*>(challenge.data()) + p.challengeSent,
              challenge.size() - p.challengeSent};
    Result<transport::socket::IoResult> sent =
        transport::socket::sendSome(p.conn.fd.get(), &iov, 1);
    if (!sent.isOk()) {
      *why = sent.status().message();
      return false;
    }
    p.challengeSent += sent->bytes;
    return true;
  }
  uint8_t buffer[512];
  size_t want = std::min(p.reader.need(), sizeof(buffer));
  Result<transport::socket::IoResult> got =
      transport::socket::recvSome(p.conn.fd.get(), buffer, want);
  if (!got.isOk() || got->closed) {
    *why = got.isOk() ? "closed the connection mid-handshake" : got.status().message();
    return false;
  }
  Status fed = p.reader.feed(wire::ByteSpan(buffer, got->bytes));
  if (!fed.isOk()) {
    *why = fed.message();
    return false;
  }
  if (!p.reader.done()) return true;
  p.conn.transcript.hello = p.reader.frame();
  Result<wire::Bytes> fields = verifyHello(secret_, protocol_, p.conn.transcript);
  if (!fields.isOk()) {
    *why = fields.status().message();
    return false;
  }
  p.conn.fields = std::move(*fields);
  return true;
}

void AcceptLoop::drop(std::list<Pending>::iterator it, const std::string& why) {
  ++rejected_;
  BRAID_WARN("%s: rejected the connection from %s: %s", who_.c_str(),
             it->conn.peer.empty() ? "an unknown peer" : it->conn.peer.c_str(), why.c_str());
  pending_.erase(it);  // closes the socket: the peer gets no answer
}

}  // namespace braid::bootstrap
