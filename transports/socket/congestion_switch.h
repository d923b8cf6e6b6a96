// Per-message congestion control on a same-host stream (BRAID_SOCKET_CONGESTION=auto).
//
// Over loopback neither algorithm suits every message. Reno sends what its
// window allows at once and is the faster one for large messages (2 MiB calls
// between two ranks, isolated or with a cache-evicting gap between them, and
// exchanges of 512 KiB messages both ways). For shorter messages between
// calls that leave the caches cold, BBR was the faster one (128-256 KiB
// all-gather, all-to-all, reduce-scatter and broadcast between two ranks),
// while calls after a barrier alone ran alike under both; cubic, and reno
// paced through SO_MAX_PACING_RATE, ran as reno (perf/RESULTS.md, "The cells
// not measured before, and TCP, 2 ranks: the gap pattern").
//
// So a stream that "auto" gave reno switches to BBR before a message from
// 16 KiB to below 512 KiB and back before a longer one; smaller messages
// (barriers, small reductions) leave it as it is, so they cost no system call.
// Congestion control acts on the sending side only, so each end switches its
// own. Where the kernel refuses BBR (not built, or not in
// net.ipv4.tcp_allowed_congestion_control) the stream stays on reno for good.
#pragma once

#include <cstddef>
#include <string>

#include "transports/socket/congestion.h"

namespace braid::transport::socket {

/// Messages below this leave a stream's algorithm as it is.
inline constexpr size_t kPerMessageMinBytes = size_t{16} << 10;
/// Messages from this size on run kSameHostCongestion (reno), shorter ones (from
/// kPerMessageMinBytes) kSameHostShortCongestion.
inline constexpr size_t kLongMessageBytes = size_t{512} << 10;
inline constexpr const char* kSameHostShortCongestion = "bbr";

/// True when `setting` (Config::socketCongestion) has a stream switch per message:
/// "auto" (or unset) on a stream between ranks of one host.
bool switchesPerMessage(const std::string& setting, bool sameHost);

/// The algorithm a switching stream runs for a message of `bytes`: `shortName` below
/// kLongMessageBytes, kSameHostCongestion from there; nullptr below kPerMessageMinBytes.
const char* congestionForMessage(size_t bytes, const char* shortName = kSameHostShortCongestion);

/// One stream's switch. It remembers what it set, so a system call happens only when the
/// message class changes; the first refusal turns it off and leaves the stream on reno.
class CongestionSwitch {
 public:
  CongestionSwitch() = default;  // off: never touches the stream
  /// `on`: the stream runs kSameHostCongestion now (applyCongestionControl set it).
  /// `shortName` is for tests (a name the kernel refuses exercises the fallback).
  explicit CongestionSwitch(bool on, const char* shortName = kSameHostShortCongestion)
      : on_(on), shortName_(shortName) {}

  /// Before stream `fd` sends (part of) a message of `bytes`.
  void beforeMessage(int fd, size_t bytes);

  bool on() const { return on_; }
  /// The algorithm this switch last set (kSameHostCongestion until it switched).
  const char* current() const { return current_; }

 private:
  bool on_ = false;
  const char* shortName_ = kSameHostShortCongestion;
  const char* current_ = kSameHostCongestion;
};

}  // namespace braid::transport::socket
