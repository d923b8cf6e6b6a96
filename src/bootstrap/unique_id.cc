#include "bootstrap/unique_id.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

namespace braid::bootstrap {

WireAddr WireAddr::from(const SockAddr& address) {
  WireAddr w;
  w.length = static_cast<uint16_t>(std::min<size_t>(address.length, sizeof(w.bytes)));
  std::memcpy(w.bytes, &address.storage, w.length);
  return w;
}

SockAddr WireAddr::toSockAddr() const {
  SockAddr a;
  a.length = std::min<socklen_t>(length, sizeof(bytes));
  std::memcpy(&a.storage, bytes, a.length);
  return a;
}

void UniqueId::writeTo(braidUniqueId* out) const {
  std::memset(out->internal, 0, sizeof(out->internal));
  std::memcpy(out->internal, this, sizeof(*this));
}

Result<UniqueId> UniqueId::readFrom(const braidUniqueId& id) {
  UniqueId u;
  std::memcpy(&u, id.internal, sizeof(u));
  if (u.magic != kMagic) {
    return invalidArgument("commId is not a braidUniqueId made by braidGetUniqueId");
  }
  if (u.version / 100 != BRAID_VERSION_CODE / 100) {
    return invalidArgument("commId comes from braid version " + std::to_string(u.version) +
                           ", this library is " + std::to_string(BRAID_VERSION_CODE));
  }
  sa_family_t family = u.root.toSockAddr().storage.ss_family;
  if (u.root.length == 0 || (family != AF_INET && family != AF_INET6)) {
    return invalidArgument("commId holds no valid root address");
  }
  return u;
}

Status randomSecret(uint8_t (&secret)[kSecretBytes]) {
  size_t got = 0;
  while (got < kSecretBytes) {
    ssize_t n = ::getrandom(secret + got, kSecretBytes - got, 0);
    if (n < 0 && errno != EINTR) return systemError("getrandom", errno);
    if (n > 0) got += n;
  }
  return Status::ok();
}

bool sameSecret(const uint8_t* a, const uint8_t* b) {
  uint8_t diff = 0;
  for (int i = 0; i < kSecretBytes; ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

std::string toHex(const uint8_t* bytes, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = kDigits[bytes[i] >> 4];
    s[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return s;
}

}  // namespace braid::bootstrap
