// TCP congestion control of the socket transport's streams (BRAID_SOCKET_CONGESTION).
//
// Between two ranks of one host a stream runs over loopback, where nothing is
// lost or queued and congestion control has nothing to control. The system's
// default may still cost there: with BBR (a pacing algorithm, which also
// shrinks its window now and then to re-measure the round trip) a 2-rank
// loopback broadcast of 2 MiB ran slower than with reno, which sends what the
// window allows at once (perf/RESULTS.md, "TCP, 2 ranks"). So by default such
// streams run reno, which every Linux kernel has built in and lets any process
// choose, switching to BBR for shorter messages where the kernel allows it
// (congestion_switch.h); streams between hosts keep the system's choice, made
// for that network.
#pragma once

#include <string>

#include "core/status.h"

namespace braid::transport::socket {

/// The algorithm "auto" gives streams between ranks of one host.
inline constexpr const char* kSameHostCongestion = "reno";

/// The congestion control `setting` (Config::socketCongestion: "auto", "system" or a name)
/// asks for on a stream whose two ends are on one host (`sameHost`) or not; "" for the
/// system's default.
std::string congestionFor(const std::string& setting, bool sameHost);

/// True when both ends of connected socket `fd` have the same IP address: the peer is on
/// this host (loopback, or this host's own address, which the kernel routes over loopback).
bool sameHostStream(int fd);

/// Sets the congestion control `setting` asks for on connected stream `fd`. A name the user
/// gave that the kernel refuses is an error naming BRAID_SOCKET_CONGESTION; "auto"'s choice
/// refused (a kernel without reno's module name, a sandbox) leaves the default, silently.
Status applyCongestionControl(int fd, const std::string& setting);

}  // namespace braid::transport::socket
