// TLS contexts, sessions and non-blocking I/O through libssl (see tls.h).
#include "core/net/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/tls1.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace braid::transport::socket {
namespace {

// Sent in clear in the ClientHello; it names the scheme, not the communicator.
constexpr std::string_view kPskIdentity = "braid socket psk v1";
// TLS_AES_128_GCM_SHA256: the PSK's hash must be the suite's (SHA-256).
constexpr unsigned char kPskSuite[2] = {0x13, 0x01};
// An SSL's app data while its last receive stopped at a partial record (tlsHoldsData).
constexpr char kDrained[] = "drained";

const TlsOptions& optionsOf(SSL* ssl) {
  return static_cast<const TlsContext*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)))->options();
}

using Key = std::array<uint8_t, 32>;

// Where an SSL of a keyPerConnection context keeps its key (a heap copy it owns).
int connectionKeyIndex() {
  static const int index = SSL_get_ex_new_index(
      0, nullptr, nullptr, nullptr,
      [](void*, void* key, CRYPTO_EX_DATA*, int, long, void*) { delete static_cast<Key*>(key); });
  return index;
}

// The PSK of `ssl`: its context's, or its own; null where it has none.
const Key* pskOf(SSL* ssl) {
  if (!optionsOf(ssl).keyPerConnection) return &optionsOf(ssl).psk;
  return static_cast<const Key*>(SSL_get_ex_data(ssl, connectionKeyIndex()));
}

// A TLS 1.3 session that holds the PSK, as OpenSSL wants it from the callbacks below.
SSL_SESSION* pskSession(SSL* ssl) {
  const Key* key = pskOf(ssl);
  if (key == nullptr) return nullptr;  // never an all-zero key by default
  const Key& psk = *key;
  const SSL_CIPHER* cipher = SSL_CIPHER_find(ssl, kPskSuite);
  SSL_SESSION* session = SSL_SESSION_new();
  if (cipher == nullptr || session == nullptr ||
      SSL_SESSION_set1_master_key(session, psk.data(), psk.size()) != 1 ||
      SSL_SESSION_set_cipher(session, cipher) != 1 ||
      SSL_SESSION_set_protocol_version(session, TLS1_3_VERSION) != 1) {
    SSL_SESSION_free(session);
    return nullptr;
  }
  return session;
}

int usePskSession(SSL* ssl, const EVP_MD* md, const unsigned char** id, size_t* idLength,
                  SSL_SESSION** session) {
  *session = nullptr;
  // A second call (after a HelloRetryRequest) names the negotiated hash; ours is SHA-256.
  if (md != nullptr && EVP_MD_get_type(md) != NID_sha256) return 1;
  *session = pskSession(ssl);
  if (*session == nullptr) return 0;
  *id = reinterpret_cast<const unsigned char*>(kPskIdentity.data());
  *idLength = kPskIdentity.size();
  return 1;
}

int findPskSession(SSL* ssl, const unsigned char* id, size_t idLength, SSL_SESSION** session) {
  *session = nullptr;  // an unknown identity: no PSK, and with no certificate, no handshake
  if (std::string_view(reinterpret_cast<const char*>(id), idLength) != kPskIdentity) return 1;
  *session = pskSession(ssl);
  return *session != nullptr ? 1 : 0;
}

std::string openSslReason() {
  unsigned long e = ERR_get_error();
  std::string text;
  while (e != 0) {  // the first error is the root cause; later ones add context
    if (text.empty()) {
      const char* reason = ERR_reason_error_string(e);
      text = reason != nullptr ? reason : "error " + std::to_string(ERR_GET_REASON(e));
    }
    e = ERR_get_error();
  }
  return text;
}

Status contextError(const std::string& what) {
  std::string reason = openSslReason();
  return Status(braidInvalidArgument, "TLS: " + what + (reason.empty() ? "" : " (" + reason + ")"));
}

// A write-side BIO over a socket that sends with MSG_NOSIGNAL (libssl's socket BIO uses
// write(), which raises SIGPIPE when the peer is gone).
int noSignalWrite(BIO* bio, const char* data, int bytes) {
  BIO_clear_retry_flags(bio);
  while (true) {
    ssize_t n = ::send(static_cast<int>(BIO_get_fd(bio, nullptr)), data, bytes,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return static_cast<int>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_write(bio);
    return -1;
  }
}

long noSignalCtrl(BIO* bio, int cmd, long num, void* ptr) {
  switch (cmd) {
    case BIO_C_SET_FD:
      BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(*static_cast<int*>(ptr))));
      BIO_set_init(bio, 1);
      return 1;
    case BIO_C_GET_FD: {
      const int fd = static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(bio)));
      if (ptr != nullptr) *static_cast<int*>(ptr) = fd;
      return fd;
    }
    case BIO_CTRL_FLUSH:
      return 1;
    default:
      (void)num;
      return 0;
  }
}

const BIO_METHOD* noSignalMethod() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "braid send");
    if (m != nullptr) {
      BIO_meth_set_write(m, noSignalWrite);
      BIO_meth_set_ctrl(m, noSignalCtrl);
    }
    return m;
  }();
  return method;
}

}  // namespace

Status sendWithoutSignals(SSL* ssl, int fd) {
  const BIO_METHOD* method = noSignalMethod();
  BIO* bio = method != nullptr ? BIO_new(method) : nullptr;
  if (bio == nullptr) return Status(braidSystemError, "TLS: BIO_new failed");
  BIO_set_fd(bio, fd, BIO_NOCLOSE);
  SSL_set0_wbio(ssl, bio);  // the SSL owns it
  return Status::ok();
}

SigpipeGuard::SigpipeGuard() {
  sigemptyset(&pipe_);
  sigaddset(&pipe_, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
}

SigpipeGuard::~SigpipeGuard() {
  const int savedErrno = errno;
  sigset_t pending;
  if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1 &&
      sigismember(&old_, SIGPIPE) == 0) {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  errno = savedErrno;
}

Result<std::unique_ptr<TlsContext>> TlsContext::create(const TlsOptions& options) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_method());
  if (ctx == nullptr) return Status(braidSystemError, "TLS: SSL_CTX_new failed");
  std::unique_ptr<TlsContext> context(new TlsContext(ctx, options));
  SSL_CTX_set_app_data(ctx, context.get());
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1) {
    return contextError("TLS 1.3 is not available");
  }
  // No tickets: nothing resumes, and a ticket arriving after the handshake would be a
  // non-data record in the middle of a kernel-TLS stream.
  SSL_CTX_set_num_tickets(ctx, 0);
  SSL_CTX_set_options(ctx,
                      (options.kernelTls ? SSL_OP_ENABLE_KTLS : 0) | SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (options.usesCertificates()) {
    if (SSL_CTX_set_ciphersuites(ctx,
                                 "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
                                 "TLS_CHACHA20_POLY1305_SHA256") != 1) {
      return contextError("no TLS 1.3 cipher suite");
    }
    if (SSL_CTX_use_certificate_chain_file(ctx, options.certFile.c_str()) != 1) {
      return contextError("BRAID_TLS_CERT='" + options.certFile +
                          "' is not a readable PEM certificate chain");
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, options.keyFile.c_str(), SSL_FILETYPE_PEM) != 1) {
      return contextError("BRAID_TLS_KEY='" + options.keyFile + "' is not a readable PEM key");
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
      return contextError("BRAID_TLS_KEY does not match the certificate of BRAID_TLS_CERT");
    }
    if (SSL_CTX_load_verify_locations(ctx, options.caFile.c_str(), nullptr) != 1) {
      return contextError("BRAID_TLS_CA='" + options.caFile + "' is not a readable PEM file");
    }
    // Both ends present a certificate the CA signed (ranks connect by address, so there is
    // no host name to check: the CA is the trust anchor).
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  } else {
    if (SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256") != 1) {
      return contextError("no TLS 1.3 cipher suite with SHA-256");
    }
    SSL_CTX_set_psk_use_session_callback(ctx, usePskSession);
    SSL_CTX_set_psk_find_session_callback(ctx, findPskSession);
  }
  return context;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

Result<const TlsContext*> TlsContext::perConnectionKeys() {
  const auto make = [](bool kernelTls) -> Result<const TlsContext*> {
    TlsOptions options;
    options.enabled = true;
    options.keyPerConnection = true;
    options.kernelTls = kernelTls;
    Result<std::unique_ptr<TlsContext>> made = create(options);
    if (!made.isOk()) return made.status();
    return const_cast<const TlsContext*>(made->release());  // kept to the end of the process
  };
  const char* kernelTls = std::getenv("BRAID_SOCKET_KTLS");  // Config::fromEnv checks it
  if (kernelTls == nullptr || std::string_view(kernelTls) != "0") {
    static const Result<const TlsContext*> withKernel = make(true);
    return withKernel;
  }
  static const Result<const TlsContext*> withoutKernel = make(false);
  return withoutKernel;
}

Status setConnectionKey(SSL* ssl, const std::array<uint8_t, 32>& key) {
  auto* copy = new Key(key);
  if (SSL_set_ex_data(ssl, connectionKeyIndex(), copy) != 1) {
    delete copy;
    return Status(braidSystemError, "TLS: SSL_set_ex_data failed");
  }
  return Status::ok();
}

TlsSession& TlsSession::operator=(TlsSession&& other) noexcept {
  if (this != &other) {
    SSL_free(ssl_);
    ssl_ = other.ssl_;
    kernelSend_ = other.kernelSend_;
    kernelRecv_ = other.kernelRecv_;
    other.ssl_ = nullptr;
  }
  return *this;
}

TlsSession::~TlsSession() { SSL_free(ssl_); }

const char* TlsSession::recordLayer() const {
  if (ssl_ == nullptr) return "";
  if (kernelSend_ && kernelRecv_) return "kernel TLS";
  if (kernelSend_) return "kernel TLS for sends, OpenSSL for receives";
  if (kernelRecv_) return "kernel TLS for receives, OpenSSL for sends";
  return "OpenSSL (no kernel TLS)";
}

std::string tlsFailure(int sslError) {
  std::string reason = openSslReason();
  if (sslError == SSL_ERROR_SYSCALL) {
    return "TLS: " + (reason.empty() ? (errno != 0 ? std::string(std::strerror(errno))
                                                   : std::string("connection lost"))
                                     : reason);
  }
  return "TLS: " + (reason.empty() ? "error " + std::to_string(sslError) : reason);
}

// Not partial writes: SSL_write_ex takes a whole buffer or nothing, and after nothing it
// keeps what it has encrypted and must be called again with the same bytes, which the
// connector does (it retries from the first byte not reported sent).
namespace {

Result<IoResult> writeEach(SSL* ssl, const iovec* iov, int iovCount) {
  IoResult result;
  for (int i = 0; i < iovCount; ++i) {
    if (iov[i].iov_len == 0) continue;
    ERR_clear_error();
    size_t written = 0;
    if (SSL_write_ex(ssl, iov[i].iov_base, iov[i].iov_len, &written) == 1) {
      result.bytes += written;
      continue;
    }
    const int e = SSL_get_error(ssl, 0);
    if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) return result;
    return Status(braidRemoteError, "send failed: " + tlsFailure(e));
  }
  return result;
}

}  // namespace

Result<IoResult> tlsSendSome(SSL* ssl, const iovec* iov, int iovCount) {
  // A frame header and a payload that fit in one record (16 KiB of plaintext) go out as one:
  // one AEAD operation and one system call on each side instead of two, for one copy of at
  // most a record. A retry after nothing was taken passes the same iovecs, so the same bytes.
  constexpr size_t kRecordBytes = 16384;
  size_t total = 0;
  for (int i = 0; i < iovCount; ++i) total += iov[i].iov_len;
  if (iovCount > 1 && total <= kRecordBytes) {
    thread_local uint8_t record[kRecordBytes];
    size_t at = 0;
    for (int i = 0; i < iovCount; ++i) {
      std::memcpy(record + at, iov[i].iov_base, iov[i].iov_len);
      at += iov[i].iov_len;
    }
    const iovec one{record, total};
    return writeEach(ssl, &one, 1);
  }
  return writeEach(ssl, iov, iovCount);
}

Result<IoResult> tlsRecvSomeV(SSL* ssl, const iovec* iov, int iovCount) {
  SSL_set_app_data(ssl, nullptr);  // may hold whole records until a read finds none
  IoResult result;
  for (int i = 0; i < iovCount; ++i) {
    size_t got = 0;
    while (got < iov[i].iov_len) {  // SSL_read returns one record at most
      ERR_clear_error();
      size_t n = 0;
      if (SSL_read_ex(ssl, static_cast<uint8_t*>(iov[i].iov_base) + got, iov[i].iov_len - got,
                      &n) == 1) {
        got += n;
        result.bytes += n;
        continue;
      }
      const int e = SSL_get_error(ssl, 0);
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        SSL_set_app_data(ssl, const_cast<char*>(kDrained));
        return result;
      }
      if (e == SSL_ERROR_ZERO_RETURN) {
        result.closed = result.bytes == 0;
        return result;
      }
      if (e == SSL_ERROR_SSL) {
        return Status(braidRemoteError, std::string(kRejectedRecord) + tlsFailure(e));
      }
      return Status(braidRemoteError, "recv failed: " + tlsFailure(e));
    }
  }
  return result;
}

bool tlsHoldsData(SSL* ssl) {
  return SSL_get_app_data(ssl) != kDrained && SSL_has_pending(ssl) == 1;
}

void tlsReadAhead(SSL* ssl) { SSL_set_read_ahead(ssl, 1); }

bool isRejectedRecord(const Status& status) {
  return status.message().starts_with(kRejectedRecord);
}

Result<IoResult> tlsRecvSome(SSL* ssl, void* data, size_t bytes) {
  iovec iov{data, bytes};
  return tlsRecvSomeV(ssl, &iov, 1);
}

}  // namespace braid::transport::socket
