// TLS 1.3 on braid's TCP connections (BRAID_SOCKET_TLS=1), through OpenSSL's libssl: the
// socket transport's streams (transports/socket/tls_setup.h) and the bootstrap's links
// (bootstrap/link.h) both use the contexts, sessions and transfers of this file.
//
// Two ways to authenticate, chosen by the environment and the same on every rank:
//  - a pre-shared key (the default): 32 bytes derived from the unique id's secret with
//    HKDF, which braid never sends; only ranks holding the unique id complete a
//    handshake. psk_dhe_ke gives each connection fresh keys (forward secrecy). The
//    bootstrap's links always use this way, with a key per connection;
//  - certificates (BRAID_TLS_CERT, BRAID_TLS_KEY, BRAID_TLS_CA): mutual TLS, every rank
//    presents its certificate and accepts any peer certificate the CA signed.
//
// Records: TLS 1.3 only, AES-GCM first (AES-NI; every suite offered is one Linux's kernel
// TLS implements). Where the kernel offers kernel TLS (Linux `tls` module, OpenSSL built
// with it) and BRAID_SOCKET_KTLS is not 0, OpenSSL hands each direction it can to the kernel
// after the handshake and that direction goes on with plain sendmsg/recvmsg, so its data
// path is the plain one; elsewhere SSL_write/SSL_read encrypt in user space. OpenSSL 3.0
// hands over sends only for TLS 1.3 (receives from 3.2 on).
//
// Streams carry no session tickets (nothing resumes) and a connection that ends without a
// close_notify reads as closed, as a plain TCP stream does: the framing above (socket_wire.h)
// tells a connection cut inside a message from one closed between messages.
#pragma once

#include <openssl/ssl.h>
#include <signal.h>
#include <sys/uio.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "core/net/socket_util.h"
#include "core/status.h"

namespace braid::transport::socket {

/// What BRAID_SOCKET_TLS and BRAID_TLS_* ask for (the bootstrap fills in a key only).
struct TlsOptions {
  bool enabled = false;
  std::string certFile;           // BRAID_TLS_CERT: this rank's certificate chain (PEM)
  std::string keyFile;            // BRAID_TLS_KEY: its private key (PEM)
  std::string caFile;             // BRAID_TLS_CA: the CA that signs every rank's certificate
  std::array<uint8_t, 32> psk{};  // the pre-shared key, when no certificate is given
  // Instead of `psk`: each connection's own key (setConnectionKey); a connection without
  // one fails its handshake.
  bool keyPerConnection = false;
  // Offer the records to kernel TLS (BRAID_SOCKET_KTLS, default 1); false: OpenSSL keeps them.
  bool kernelTls = true;
  bool usesCertificates() const { return !certFile.empty(); }
};

/// An SSL_CTX set up for braid's streams (see the file comment).
class TlsContext {
 public:
  /// Fails with a message naming the variable whose file cannot be used.
  static Result<std::unique_ptr<TlsContext>> create(const TlsOptions& options);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  /// The process's context for connections keyed one by one (keyPerConnection), such as
  /// the bootstrap's: made once (an SSL_CTX is costly to make), never freed,
  /// since a detached bootstrap root may still be using it while the process exits.
  /// Two of them, made on first use: BRAID_SOCKET_KTLS=0 in the environment when a
  /// connection starts picks the one that keeps its records in OpenSSL.
  static Result<const TlsContext*> perConnectionKeys();

  SSL_CTX* get() const { return ctx_; }
  const TlsOptions& options() const { return options_; }

 private:
  TlsContext(SSL_CTX* ctx, const TlsOptions& options) : ctx_(ctx), options_(options) {}
  SSL_CTX* const ctx_;
  const TlsOptions options_;  // the PSK callbacks read the key from here
};

/// One stream's TLS connection; empty on a plain stream.
class TlsSession {
 public:
  TlsSession() = default;
  TlsSession(SSL* ssl, bool kernelSend, bool kernelRecv)
      : ssl_(ssl), kernelSend_(kernelSend), kernelRecv_(kernelRecv) {}
  TlsSession(TlsSession&& other) noexcept { *this = std::move(other); }
  TlsSession& operator=(TlsSession&& other) noexcept;
  ~TlsSession();

  bool active() const { return ssl_ != nullptr; }
  /// Gives up ownership of the SSL (the caller frees it or wraps it again).
  SSL* release() {
    SSL* ssl = ssl_;
    ssl_ = nullptr;
    return ssl;
  }
  SSL* ssl() const { return ssl_; }
  /// The SSL that sends / receives go through, or null where they are plain system calls
  /// (no TLS, or kernel TLS does the records).
  SSL* userSend() const { return kernelSend_ ? nullptr : ssl_; }
  SSL* userRecv() const { return kernelRecv_ ? nullptr : ssl_; }
  /// "kernel TLS", "kernel TLS for sends" or "OpenSSL" ("" on a plain stream), for the log.
  const char* recordLayer() const;

 private:
  SSL* ssl_ = nullptr;
  bool kernelSend_ = false;
  bool kernelRecv_ = false;
};

/// Keys `ssl` (made from a keyPerConnection context, before its handshake) with `key`.
Status setConnectionKey(SSL* ssl, const std::array<uint8_t, 32>& key);

/// libssl's socket BIO writes with write(), which raises SIGPIPE when the peer is gone
/// (plain streams use MSG_NOSIGNAL), and a library must not kill its host process. During
/// the handshake (where kernel TLS needs libssl's own socket BIO) SIGPIPE is blocked on the
/// calling thread around libssl calls, and one they raised is consumed; afterwards streams
/// whose sends stay in user space write through sendWithoutSignals' BIO instead.
class SigpipeGuard {
 public:
  SigpipeGuard();
  ~SigpipeGuard();
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_;
  sigset_t old_;
};

/// Makes `ssl` write to `fd` with send(MSG_NOSIGNAL) from now on (the data path of streams
/// without kernel TLS for sends: no signal masking per call).
Status sendWithoutSignals(SSL* ssl, int fd);

/// sendSome / recvSome / recvSomeV (socket_util.h) through `ssl`, with the same contract:
/// 0 bytes when it would block, `closed` at the peer's end of stream, an error (with
/// OpenSSL's reason, e.g. a record that fails authentication) otherwise. A send that
/// returned 0 bytes must be retried with the same bytes (the connector does).
Result<IoResult> tlsSendSome(SSL* ssl, const iovec* iov, int iovCount);
Result<IoResult> tlsRecvSome(SSL* ssl, void* data, size_t bytes);
Result<IoResult> tlsRecvSomeV(SSL* ssl, const iovec* iov, int iovCount);

/// True when libssl holds bytes a receive on `ssl` would return without waiting for the
/// socket: decrypted data, or whole records read ahead. False after a receive that drained
/// everything up to a partial record, whose rest the socket (hence epoll) will report.
bool tlsHoldsData(SSL* ssl);

/// Receives on `ssl` read ahead: several records per system call, up to the read buffer's
/// size (kTlsReadBufferBytes, set when the SSL is made). Only where libssl does the records
/// (not with kernel TLS for receives); call after the handshake.
constexpr size_t kTlsReadBufferBytes = 64 << 10;
void tlsReadAhead(SSL* ssl);

/// True for a receive error that is a record failing TLS's checks (forged, altered,
/// replayed or out of order), never a peer that left: the connector reports it even
/// between messages, where a plain reset may be a peer that is done.
bool isRejectedRecord(const Status& status);

/// A stream's transfers: plain system calls when `ssl` is null (no TLS, or kernel TLS),
/// else through libssl. One predictable branch; the plain path is otherwise unchanged.
inline Result<IoResult> sendOn(int fd, SSL* ssl, const iovec* iov, int count) {
  if (ssl == nullptr) [[likely]]
    return sendSome(fd, iov, count);
  return tlsSendSome(ssl, iov, count);
}
inline Result<IoResult> recvOn(int fd, SSL* ssl, void* data, size_t bytes) {
  if (ssl == nullptr) [[likely]]
    return recvSome(fd, data, bytes);
  return tlsRecvSome(ssl, data, bytes);
}
inline Result<IoResult> recvOnV(int fd, SSL* ssl, const iovec* iov, int count) {
  if (ssl == nullptr) [[likely]]
    return recvSomeV(fd, iov, count);
  return tlsRecvSomeV(ssl, iov, count);
}

/// OpenSSL's reason for the failure `sslError` (SSL_get_error) of a call on `ssl`, e.g.
/// "TLS: decryption failed or bad record mac"; clears the thread's error queue.
std::string tlsFailure(int sslError);

}  // namespace braid::transport::socket
