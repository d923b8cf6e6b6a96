// Which hosts are this machine, and the address other hosts reach rank 0 at.
//
// A multi-host job starts the ranks of "localhost" (or of this machine's own
// name) directly, as a single-host job does, and the others through the
// launcher. The bootstrap root is where rank 0 runs:
//   - rank 0 here: braidrun binds the root's port on every interface and rank 0
//     inherits the socket (no other program can take the port first); ranks
//     elsewhere reach it at --root-addr or, by default, at the address of this
//     machine's interface on the route to the first other host;
//   - rank 0 elsewhere: that host's rank 0 binds the port itself; ranks reach it
//     at --root-addr or at the host's name as the list gives it.
#pragma once

#include <string>

namespace braid::run {

/// Whether `host` names this machine: localhost, a loopback address, or this
/// machine's host name (with or without its domain).
bool isLocalHost(const std::string& host);

/// The local IPv4 address the kernel would send from to reach `host` (resolved by
/// name); false with *error set when it cannot be resolved or has no route.
bool routeSourceAddress(const std::string& host, std::string* address, std::string* error);

}  // namespace braid::run
