// Choosing the network interface braid listens on.
#pragma once

#include <string>

#include "bootstrap/tcp.h"
#include "core/status.h"

namespace braid::bootstrap {

/// The address of the first up interface whose name starts with `ifnamePrefix`
/// (BRAID_SOCKET_IFNAME; "^name" matches exactly, "=name" too); when the prefix
/// is empty, the first non-loopback IPv4 interface, else loopback. Port 0.
Result<SockAddr> pickInterface(const std::string& ifnamePrefix);

}  // namespace braid::bootstrap
