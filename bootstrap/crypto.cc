// Thin wrappers over libcrypto (see crypto.h for what is used where).
#include "bootstrap/crypto.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <memory>
#include <new>
#include <string>

namespace braid::bootstrap {
namespace {

// libcrypto reports a failure of a well-formed call only when it runs out of memory.
void check(int ok) {
  if (ok != 1) {
    ERR_clear_error();
    throw std::bad_alloc();
  }
}

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using MacPtr = std::unique_ptr<EVP_MAC, Deleter<EVP_MAC, EVP_MAC_free>>;
using MacCtxPtr = std::unique_ptr<EVP_MAC_CTX, Deleter<EVP_MAC_CTX, EVP_MAC_CTX_free>>;
using KdfPtr = std::unique_ptr<EVP_KDF, Deleter<EVP_KDF, EVP_KDF_free>>;
using KdfCtxPtr = std::unique_ptr<EVP_KDF_CTX, Deleter<EVP_KDF_CTX, EVP_KDF_CTX_free>>;

}  // namespace

Digest hmacSha256(const void* key, size_t keyBytes, std::span<const ConstBytes> parts) {
  MacPtr mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  check(mac != nullptr);
  MacCtxPtr ctx(EVP_MAC_CTX_new(mac.get()));
  check(ctx != nullptr);
  char digestName[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digestName, 0),
                         OSSL_PARAM_construct_end()};
  // A zero-length key is valid HMAC; OpenSSL wants a non-null pointer for it.
  static const uint8_t kEmpty = 0;
  check(EVP_MAC_init(ctx.get(), keyBytes > 0 ? static_cast<const uint8_t*>(key) : &kEmpty, keyBytes,
                     params));
  for (ConstBytes part : parts) {
    if (!part.empty()) check(EVP_MAC_update(ctx.get(), part.data(), part.size()));
  }
  Digest d;
  size_t written = 0;
  check(EVP_MAC_final(ctx.get(), d.data(), &written, d.size()));
  check(written == d.size());
  return d;
}

Digest sha256(const void* data, size_t bytes) {
  Digest d;
  unsigned int written = 0;
  check(EVP_Digest(data, bytes, d.data(), &written, EVP_sha256(), nullptr));
  check(written == d.size());
  return d;
}

void hkdfSha256(ConstBytes key, ConstBytes salt, std::string_view info, std::span<uint8_t> out) {
  KdfPtr kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr));
  check(kdf != nullptr);
  KdfCtxPtr ctx(EVP_KDF_CTX_new(kdf.get()));
  check(ctx != nullptr);
  char digestName[] = "SHA256";
  std::string infoCopy(info);  // OSSL_PARAM takes non-const pointers
  Digest emptySalt{};          // RFC 5869: no salt is HashLen zero bytes
  ConstBytes saltUsed = salt.empty() ? ConstBytes(emptySalt) : salt;
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digestName, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<uint8_t*>(key.data()),
                                        key.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<uint8_t*>(saltUsed.data()),
                                        saltUsed.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, infoCopy.data(), infoCopy.size()),
      OSSL_PARAM_construct_end()};
  check(EVP_KDF_derive(ctx.get(), out.data(), out.size(), params));
}

bool constantTimeEqual(const uint8_t* a, const uint8_t* b, size_t n) {
  return CRYPTO_memcmp(a, b, n) == 0;
}

Status randomBytes(uint8_t* out, size_t n) {
  // RAND_bytes takes an int; nonces and secrets are a few dozen bytes.
  if (n > (1u << 20) || RAND_bytes(out, static_cast<int>(n)) != 1) {
    unsigned long e = ERR_get_error();
    char text[256] = "unknown error";
    if (e != 0) ERR_error_string_n(e, text, sizeof(text));
    ERR_clear_error();
    return Status(braidSystemError, std::string("OpenSSL RAND_bytes failed: ") + text);
  }
  return Status::ok();
}

}  // namespace braid::bootstrap
