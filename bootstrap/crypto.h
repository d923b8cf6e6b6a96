// The cryptography braid uses, all of it through OpenSSL's libcrypto (a library that is
// reviewed, tested against the standards' vectors and patched when flaws are found; braid
// writes no primitive of its own):
//  - HMAC-SHA256 (RFC 2104) for the bootstrap handshake's MACs and for keys derived from a
//    communicator's secret;
//  - SHA-256 for secrets derived from a launcher's job identity;
//  - HKDF-SHA256 (RFC 5869) for the TLS pre-shared key of the socket transport;
//  - OpenSSL's CSPRNG (seeded by the kernel) for secrets and handshake nonces;
//  - CRYPTO_memcmp for comparisons that must not leak where two secrets differ.
//
// A call with valid arguments fails inside libcrypto only when it cannot allocate; these
// functions then throw std::bad_alloc, like the rest of braid's allocations, and the C API
// guard turns that into braidSystemError.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include "core/status.h"

namespace braid::bootstrap {

constexpr size_t kSha256Bytes = 32;
using Digest = std::array<uint8_t, kSha256Bytes>;
using ConstBytes = std::span<const uint8_t>;

/// HMAC-SHA256 keyed by the `keyBytes` at `key`, over the concatenation of `parts`.
Digest hmacSha256(const void* key, size_t keyBytes, std::span<const ConstBytes> parts);
inline Digest hmacSha256(const void* key, size_t keyBytes,
                         std::initializer_list<ConstBytes> parts) {
  return hmacSha256(key, keyBytes, std::span<const ConstBytes>(parts.begin(), parts.size()));
}

/// The bytes of a text, for hmacSha256's parts.
inline ConstBytes bytesOf(std::string_view text) {
  return ConstBytes(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

/// SHA-256 of one buffer.
Digest sha256(const void* data, size_t bytes);

/// HKDF-SHA256 (extract then expand) of `key` with `salt` and `info` into `out`.
void hkdfSha256(ConstBytes key, ConstBytes salt, std::string_view info, std::span<uint8_t> out);

/// True when the n bytes at a and b are equal; takes the same time wherever they differ.
bool constantTimeEqual(const uint8_t* a, const uint8_t* b, size_t n);

/// n bytes from OpenSSL's CSPRNG: secrets and handshake nonces.
Status randomBytes(uint8_t* out, size_t n);

}  // namespace braid::bootstrap
