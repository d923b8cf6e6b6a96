// The TLS step of socket setup (see tls_setup.h). Each connection is a small state
// machine: handshake, write this end's binding, read the peer's; each step runs until
// libssl would block, then poll() waits for what it asked (read or write).
#include "transports/socket/tls_setup.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <poll.h>

#include <string>

#include "core/log.h"

namespace braid::transport::socket {
namespace {

// Written by each end inside TLS once the handshake is done.
struct Binding {
  static constexpr uint64_t kMagic = 0x314e494254445242ULL;  // "BRDTBIN1" in memory
  uint64_t magic;
  int32_t from;    // the writer's rank
  int32_t to;      // the rank it believes it speaks to
  int32_t stream;  // the stream index of this connection
  int32_t reserved;
};
static_assert(sizeof(Binding) == 24);

struct Link {
  int peer;
  int stream;
  SSL* ssl;  // owned by `session` once made
  TlsSession session;
  enum class State { kHandshake, kSendBinding, kReadBinding, kDone } state = State::kHandshake;
  Binding theirs{};
  size_t got = 0;
  short waitFor = 0;  // POLLIN / POLLOUT while blocked
};

Status linkError(const Link& link, const std::string& what) {
  return remoteError("socket transport: TLS with rank " + std::to_string(link.peer) + " (stream " +
                         std::to_string(link.stream) + ") failed: " + what,
                     link.peer);
}

// Would-block (sets waitFor and returns ok) or an error naming the peer.
Status blockedOr(Link& link, int sslError, const char* during) {
  if (sslError == SSL_ERROR_WANT_READ) {
    link.waitFor = POLLIN;
    return Status::ok();
  }
  if (sslError == SSL_ERROR_WANT_WRITE) {
    link.waitFor = POLLOUT;
    return Status::ok();
  }
  if (sslError == SSL_ERROR_ZERO_RETURN) return linkError(link, std::string(during) + ": closed");
  return linkError(link, std::string(during) + ": " + tlsFailure(sslError));
}

// Moves `link` on until it is done or blocked.
Status step(Link& link, int rank) {
  SigpipeGuard guard;
  link.waitFor = 0;
  while (link.state != Link::State::kDone && link.waitFor == 0) {
    ERR_clear_error();
    switch (link.state) {
      case Link::State::kHandshake: {
        const int rc = SSL_do_handshake(link.ssl);
        if (rc != 1) return blockedOr(link, SSL_get_error(link.ssl, rc), "handshake");
        link.state = Link::State::kSendBinding;
        break;
      }
      case Link::State::kSendBinding: {
        const Binding mine{Binding::kMagic, rank, link.peer, link.stream, 0};
        size_t n = 0;
        if (SSL_write_ex(link.ssl, &mine, sizeof(mine), &n) != 1) {
          return blockedOr(link, SSL_get_error(link.ssl, 0), "sending the binding");
        }
        link.state = Link::State::kReadBinding;
        break;
      }
      case Link::State::kReadBinding: {
        size_t n = 0;
        auto* into = reinterpret_cast<uint8_t*>(&link.theirs) + link.got;
        if (SSL_read_ex(link.ssl, into, sizeof(Binding) - link.got, &n) != 1) {
          return blockedOr(link, SSL_get_error(link.ssl, 0), "reading the binding");
        }
        link.got += n;
        if (link.got < sizeof(Binding)) break;
        const Binding& b = link.theirs;
        if (b.magic != Binding::kMagic || b.from != link.peer || b.to != rank ||
            b.stream != link.stream) {
          return linkError(link, "the peer's TLS session belongs to rank " +
                                     std::to_string(b.from) + " towards rank " +
                                     std::to_string(b.to) + " stream " + std::to_string(b.stream) +
                                     ", not to this connection");
        }
        link.state = Link::State::kDone;
        break;
      }
      case Link::State::kDone:
        break;
    }
  }
  return Status::ok();
}

}  // namespace

Result<std::vector<std::vector<TlsSession>>> startTls(const TlsContext& context, int rank,
                                                      const std::vector<std::vector<Fd>>& peers,
                                                      const Deadline& deadline) {
  std::vector<Link> links;
  for (size_t p = 0; p < peers.size(); ++p) {
    for (size_t s = 0; s < peers[p].size(); ++s) {
      Link link{static_cast<int>(p), static_cast<int>(s), SSL_new(context.get()), TlsSession()};
      if (link.ssl == nullptr) return Status(braidSystemError, "socket transport: SSL_new failed");
      // Allocated at the handshake; sized for read-ahead (tls.h).
      SSL_set_default_read_buffer_len(link.ssl, kTlsReadBufferBytes);
      link.session = TlsSession(link.ssl, false, false);  // owns it from here
      if (SSL_set_fd(link.ssl, peers[p][s].get()) != 1) {
        return linkError(link, "SSL_set_fd: " + tlsFailure(SSL_ERROR_SSL));
      }
      if (link.peer > rank) {
        SSL_set_connect_state(link.ssl);  // this rank connected to the higher rank
      } else {
        SSL_set_accept_state(link.ssl);
      }
      links.push_back(std::move(link));
    }
  }

  size_t done = 0;
  for (Link& link : links) {
    BRAID_RETURN_IF_ERROR(step(link, rank));
    if (link.state == Link::State::kDone) ++done;
  }
  while (done < links.size()) {
    std::vector<pollfd> fds;
    std::vector<Link*> waiting;
    for (Link& link : links) {
      if (link.state == Link::State::kDone) continue;
      fds.push_back({SSL_get_fd(link.ssl), link.waitFor, 0});
      waiting.push_back(&link);
    }
    if (deadline.expired()) {
      return timeoutError("socket transport: TLS handshake with rank " +
                              std::to_string(waiting.front()->peer) +
                              " did not finish before the deadline (BRAID_TIMEOUT)",
                          waiting.front()->peer);
    }
    const int rc = ::poll(fds.data(), fds.size(), deadline.remainingMs(1000));
    if (rc < 0 && errno != EINTR) return systemError("socket transport: poll", errno);
    for (size_t i = 0; i < fds.size() && rc > 0; ++i) {
      if (fds[i].revents == 0) continue;
      BRAID_RETURN_IF_ERROR(step(*waiting[i], rank));
      if (waiting[i]->state == Link::State::kDone) ++done;
    }
  }

  std::vector<std::vector<TlsSession>> sessions(peers.size());
  for (size_t p = 0; p < peers.size(); ++p) sessions[p].resize(peers[p].size());
  const char* layer = "";
  const char* suite = "";
  for (Link& link : links) {
    SSL* ssl = link.ssl;
    const bool kernelSend = BIO_get_ktls_send(SSL_get_wbio(ssl)) != 0;
    // Bytes libssl already holds would be lost to a plain recvmsg: keep reading through it.
    const bool kernelRecv = BIO_get_ktls_recv(SSL_get_rbio(ssl)) != 0 && SSL_has_pending(ssl) == 0;
    if (!kernelSend) BRAID_RETURN_IF_ERROR(sendWithoutSignals(ssl, SSL_get_fd(ssl)));
    // Records read one by one cost two system calls each (header, then body): read ahead.
    if (!kernelRecv) tlsReadAhead(ssl);
    link.session.release();
    sessions[link.peer][link.stream] = TlsSession(ssl, kernelSend, kernelRecv);
    layer = sessions[link.peer][link.stream].recordLayer();
    // The suite decides whether the kernel can take the records (tls.h offers only ones it can).
    suite = SSL_CIPHER_get_name(SSL_get_current_cipher(ssl));
  }
  if (!links.empty()) {
    BRAID_INFO(
        "socket transport: rank %d runs TLS 1.3 (%s) with %s on %zu connection(s), records by %s",
        rank, context.options().usesCertificates() ? "certificates" : "pre-shared key", suite,
        links.size(), layer);
  }
  return sessions;
}

}  // namespace braid::transport::socket
