// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), just enough cryptography for the
// bootstrap handshake to prove knowledge of a communicator's secret without sending it.
//
// braid has no crypto dependency on purpose (it must build anywhere a C++ compiler runs),
// so this is a small, portable, constant-time-by-construction implementation: no table
// lookups indexed by secret data, no early exits on secret comparisons. It is tested
// against the FIPS 180-2 / NIST examples and the RFC 4231 HMAC test cases. It is not
// tuned for speed: the bootstrap hashes a few hundred bytes per connection.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace braid::bootstrap {

constexpr size_t kSha256Bytes = 32;
using Digest = std::array<uint8_t, kSha256Bytes>;

/// Incremental SHA-256: update() any number of times, then finish() once.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t bytes);
  void update(std::string_view text) { update(text.data(), text.size()); }
  Digest finish();

 private:
  void compress(const uint8_t* block);

  uint32_t state_[8];
  uint8_t block_[64];
  size_t blockFill_ = 0;
  uint64_t totalBytes_ = 0;
};

/// Incremental HMAC-SHA256 keyed by `key` (any length; longer than a block is hashed first).
class HmacSha256 {
 public:
  HmacSha256(const void* key, size_t keyBytes);
  void update(const void* data, size_t bytes) { inner_.update(data, bytes); }
  void update(std::string_view text) { inner_.update(text); }
  Digest finish();

 private:
  Sha256 inner_;
  uint8_t outerKeyPad_[64];
};

/// SHA-256 of one buffer.
Digest sha256(const void* data, size_t bytes);

/// True when the n bytes at a and b are equal; takes the same time wherever they differ.
bool constantTimeEqual(const uint8_t* a, const uint8_t* b, size_t n);

}  // namespace braid::bootstrap
