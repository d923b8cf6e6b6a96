// What a braidUniqueId holds: the bootstrap root's address and the
// communicator's 128-bit secret. The id is the only thing ranks share before
// they connect, so it is all they need to find each other and to prove to each
// other that they belong to the same communicator.
#pragma once

#include <cstdint>
#include <string>

#include "bootstrap/crypto.h"
#include "bootstrap/tcp.h"
#include "braid.h"
#include "core/status.h"

namespace braid::bootstrap {

constexpr int kSecretBytes = 16;

/// A fixed-size, trivially copyable socket address for the wire.
struct WireAddr {
  uint16_t length = 0;
  uint8_t bytes[28] = {};  // sockaddr_in or sockaddr_in6

  static WireAddr from(const SockAddr& address);
  SockAddr toSockAddr() const;
  /// Ok for an IPv4 or IPv6 address whose length matches its family; anything else
  /// (from the wire or from a user's id) is refused before it reaches connect().
  Status validate() const;
};

struct UniqueId {
  static constexpr uint32_t kMagic = 0x31445242;  // "BRD1"
  uint32_t magic = kMagic;
  uint32_t version = BRAID_VERSION_CODE;
  WireAddr root;
  uint8_t secret[kSecretBytes] = {};

  void writeTo(braidUniqueId* out) const;
  /// Parses and validates an id handed in by the user.
  static Result<UniqueId> readFrom(const braidUniqueId& id);
};
static_assert(sizeof(UniqueId) <= sizeof(braidUniqueId));

/// 16 random bytes from OpenSSL's CSPRNG.
inline Status randomSecret(uint8_t (&secret)[kSecretBytes]) {
  return randomBytes(secret, kSecretBytes);
}
/// Lower-case hex of `bytes`.
std::string toHex(const uint8_t* bytes, size_t n);

}  // namespace braid::bootstrap
