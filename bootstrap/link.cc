// TLS on a bootstrap connection, and its blocking transfers (see link.h).
#include "bootstrap/link.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <string_view>

#include "bootstrap/crypto.h"

namespace braid::bootstrap {

using transport::socket::IoResult;

std::array<uint8_t, 32> linkKey(const uint8_t* secret, const Transcript& transcript) {
  constexpr std::string_view kLabel = "braid bootstrap tls key";
  const Digest key =
      hmacSha256(secret, kSecretBytes,
                 {bytesOf(kLabel), ConstBytes(transcript.challenge), ConstBytes(transcript.hello)});
  std::array<uint8_t, 32> out;
  std::copy(key.begin(), key.end(), out.begin());
  return out;
}

Status Link::startTls(bool client, const std::array<uint8_t, 32>& key, const Deadline& deadline,
                      const std::string& peer, int peerRank) {
  namespace net = transport::socket;
  BRAID_ASSIGN_OR_RETURN(const net::TlsContext* context, net::TlsContext::perConnectionKeys());
  SSL* ssl = SSL_new(context->get());
  if (ssl == nullptr) return Status(braidSystemError, "bootstrap: SSL_new failed");
  session_ = net::TlsSession(ssl, false, false);  // owns it from here
  BRAID_RETURN_IF_ERROR(net::setConnectionKey(ssl, key));
  const auto failed = [&](const std::string& why) {
    return remoteError("bootstrap: TLS with " + peer + " failed: " + why, peerRank);
  };
  if (SSL_set_fd(ssl, fd_.get()) != 1) return failed(net::tlsFailure(SSL_ERROR_SSL));
  if (client) {
    SSL_set_connect_state(ssl);
  } else {
    SSL_set_accept_state(ssl);
  }
  {
    net::SigpipeGuard guard;  // libssl's own socket BIO writes with write()
    while (true) {
      ERR_clear_error();
      const int rc = SSL_do_handshake(ssl);
      if (rc == 1) break;
      const int e = SSL_get_error(ssl, rc);
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
        return failed(e == SSL_ERROR_ZERO_RETURN ? "closed" : net::tlsFailure(e));
      }
      Status waited = net::waitForFd(fd_.get(), e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
                                     deadline, "TLS handshake");
      if (!waited.isOk())
        return Status(waited.code(), "bootstrap: TLS with " + peer + ": " + waited.message(),
                      peerRank);
    }
  }
  // Kernel TLS where the kernel took the records over (SSL_OP_ENABLE_KTLS); bytes libssl
  // already holds would be lost to a plain recv, so receives stay with libssl then.
  const bool kernelSend = BIO_get_ktls_send(SSL_get_wbio(ssl)) != 0;
  const bool kernelRecv = BIO_get_ktls_recv(SSL_get_rbio(ssl)) != 0 && SSL_has_pending(ssl) == 0;
  if (!kernelSend) BRAID_RETURN_IF_ERROR(net::sendWithoutSignals(ssl, fd_.get()));
  session_ = net::TlsSession(session_.release(), kernelSend, kernelRecv);
  return Status::ok();
}

Result<IoResult> Link::sendSome(const void* data, size_t bytes) {
  const iovec iov{const_cast<void*>(data), bytes};
  return transport::socket::sendOn(fd_.get(), session_.userSend(), &iov, 1);
}

Result<IoResult> Link::recvSome(void* data, size_t bytes) {
  return transport::socket::recvOn(fd_.get(), session_.userRecv(), data, bytes);
}

Status Link::sendAll(const void* data, size_t bytes, const Deadline& deadline) {
  size_t sent = 0;
  while (sent < bytes) {
    BRAID_ASSIGN_OR_RETURN(IoResult r,
                           sendSome(static_cast<const uint8_t*>(data) + sent, bytes - sent));
    sent += r.bytes;
    if (r.bytes == 0) {
      BRAID_RETURN_IF_ERROR(transport::socket::waitForFd(fd_.get(), POLLOUT, deadline, "sending"));
    }
  }
  return Status::ok();
}

Status Link::recvAll(void* data, size_t bytes, const Deadline& deadline) {
  size_t received = 0;
  while (received < bytes) {
    // Before any wait: libssl may already hold the bytes (the rest of a record).
    BRAID_ASSIGN_OR_RETURN(IoResult r,
                           recvSome(static_cast<uint8_t*>(data) + received, bytes - received));
    if (r.closed) {
      return Status(braidRemoteError, "connection closed by the peer after " +
                                          std::to_string(received) + " of " +
                                          std::to_string(bytes) + " bytes");
    }
    received += r.bytes;
    if (r.bytes == 0) {
      BRAID_RETURN_IF_ERROR(transport::socket::waitForFd(fd_.get(), POLLIN, deadline, "receiving"));
    }
  }
  return Status::ok();
}

void Link::cut() {
  if (fd_.valid()) ::shutdown(fd_.get(), SHUT_RDWR);
}

Status sendRecv(Link& sendLink, int sendPeer, const void* sendData, size_t sendBytes,
                Link& recvLink, int recvPeer, void* recvData, size_t recvBytes,
                const Deadline& deadline) {
  size_t sent = 0, received = 0;
  auto* out = static_cast<const uint8_t*>(sendData);
  auto* in = static_cast<uint8_t*>(recvData);
  const auto rank = [](int peer) { return "rank " + std::to_string(peer); };
  while (sent < sendBytes || received < recvBytes) {
    // Try both before waiting: libssl may hold received bytes that poll() cannot see.
    bool moved = false;
    if (sent < sendBytes) {
      Result<IoResult> r = sendLink.sendSome(out + sent, sendBytes - sent);
      if (!r.isOk())
        return remoteError("sending to " + rank(sendPeer) + ": " + r.status().message(), sendPeer);
      sent += r->bytes;
      moved |= r->bytes > 0;
    }
    if (received < recvBytes) {
      Result<IoResult> r = recvLink.recvSome(in + received, recvBytes - received);
      if (!r.isOk())
        return remoteError("receiving from " + rank(recvPeer) + ": " + r.status().message(),
                           recvPeer);
      if (r->closed) return remoteError(rank(recvPeer) + " closed its connection", recvPeer);
      received += r->bytes;
      moved |= r->bytes > 0;
    }
    if (moved) continue;
    pollfd fds[2];
    int n = 0;
    if (sent < sendBytes) fds[n++] = {sendLink.fd(), POLLOUT, 0};
    if (received < recvBytes) fds[n++] = {recvLink.fd(), POLLIN, 0};
    if (deadline.expired()) {
      const int late = received < recvBytes ? recvPeer : sendPeer;
      return timeoutError(rank(late) + " did not answer in time (BRAID_TIMEOUT)", late);
    }
    if (::poll(fds, n, deadline.remainingMs(1000)) < 0 && errno != EINTR) {
      return systemError("bootstrap: poll", errno);
    }
  }
  return Status::ok();
}

}  // namespace braid::bootstrap
