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

#include <cstdint>
#include <string>

#include "core/status.h"

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

/// The words that open the account of a message whose size differs from the receive posted
/// for it, so that ranks the news is relayed to recognise it.
inline constexpr const char* kDifferentSizes = "ranks passed different sizes";

/// That account, first hand. Without BRAID_CHECK nothing compares the calls before they
/// run, so this is where a count (or type, or collective) mismatch shows: no rank is broken,
/// the two ranks' calls differ, and BRAID_CHECK=1 would have named the argument.
inline std::string differentSizes(int sender, int receiver, uint64_t sentBytes,
                                  uint64_t expectedBytes) {
  // Short: relays carry at most 240 bytes of it, the call's name included.
  return std::string(kDifferentSizes) + " (set BRAID_CHECK=1 to compare the calls): rank " +
         std::to_string(sender) + " sent a message of " + std::to_string(sentBytes) +
         " bytes where rank " + std::to_string(receiver) + " expected " +
         std::to_string(expectedBytes) + " (sizes of pieces, not of the whole call)";
}

/// A failure `reporter` passed on: a size mismatch stays what it is (braidInvalidUsage, in
/// the first-hand words that name the two ranks); anything else is a remote error naming
/// `origin`, in `blame`'s words. Either way the Status keeps `origin` as its peer, so that
/// this rank's own abort passes the news on to ranks that have not heard it (a rank whose
/// link to this one closes without a notice could only blame this rank).
inline Status relayedFailure(const std::string& prefix, int reporter, const std::string& reason,
                             int origin, const std::string& blame) {
  if (reason.find(kDifferentSizes) != std::string::npos) {
    return Status(
        braidInvalidUsage,
        prefix + kReportedByMarker + std::to_string(reporter) + "): " + firstHandAccount(reason),
        origin);
  }
  return remoteError(prefix + blame, origin);
}

}  // namespace braid::transport
