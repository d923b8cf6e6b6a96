// What the socket transport's tests share: N ranks as N threads over a LocalBootstrapGroup,
// a Config for the transport, and a loop that progresses every connector until requests
// complete.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/config.h"
#include "support/local_bootstrap.h"
#include "transports/connector.h"

namespace braid::testing {

/// Seconds every wait of these tests may take (bootstrap, transport and driveRequests).
constexpr double kSocketTestSeconds = 20;

/// A Config for the socket transport: `streams` per peer, on `ifname` ("" chooses), with
/// TLS when `tls`.
Config socketConfig(int streams, const std::string& ifname = "", bool tls = false);

/// Runs fn(rank, bootstrap) on one thread per rank, over `group` or, when null, a fresh
/// group of `nranks`; returns each rank's Status.
std::vector<Status> runRanks(int nranks,
                             const std::function<Status(int, transport::Bootstrap&)>& fn,
                             LocalBootstrapGroup* group = nullptr);

/// Progresses every connector of `t` (ranks 0..nranks-1) until all `requests` are done;
/// a connector's error, or a timeout after kSocketTestSeconds.
Status driveRequests(transport::Transport& t, int nranks,
                     const std::vector<const transport::Request*>& requests);

}  // namespace braid::testing
