#include "bootstrap/unique_id.h"

#include <cerrno>
#include <cstddef>
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

Status WireAddr::validate() const {
  sa_family_t family;
  static_assert(sizeof(bytes) >= sizeof(sockaddr_in6));
  std::memcpy(&family, bytes + offsetof(sockaddr, sa_family), sizeof(family));
  if ((family == AF_INET && length == sizeof(sockaddr_in)) ||
      (family == AF_INET6 && length == sizeof(sockaddr_in6))) {
    return Status::ok();
  }
  return Status(braidRemoteError, "bootstrap: address of family " + std::to_string(family) +
                                      " and length " + std::to_string(length) +
                                      " is not IPv4 or IPv6");
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
  if (!u.root.validate().isOk()) return invalidArgument("commId holds no valid root address");
  return u;
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
