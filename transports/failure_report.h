// How a transport words a failure it passes on to its peers.
//
// A rank that fails because of another rank tells its peers which rank that
// is, with a reason (an abort notice over TCP, the abort record of a
// shared-memory control block). When the news is second hand, the reason is
// itself "rank K failed (reported by rank J): <J's account>", and passing
// the whole message on would nest one such prefix per hop and push the
// first-hand account out of the transport's bounded reason field. So the
// reason sent on is the first-hand account alone; the receiver adds the
// rank it heard it from.
#pragma once

#include <string>

namespace braid::transport {

/// The marker every relayed failure message carries before the account it relays.
inline constexpr const char* kReportedByMarker = "(reported by rank ";

/// `message` without the relay prefixes: the text after the last
/// "(reported by rank N): ", or all of `message` when it has none.
inline std::string firstHandAccount(const std::string& message) {
  const size_t marker = message.rfind(kReportedByMarker);
  if (marker == std::string::npos) return message;
  const size_t colon = message.find("): ", marker);
  return colon == std::string::npos ? message : message.substr(colon + 3);
}

}  // namespace braid::transport
