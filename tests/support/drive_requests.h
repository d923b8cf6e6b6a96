// Driving a transport by hand in tests: progress the connectors to some peers until the
// requests posted on them are done, sleeping in waitForActivity when nothing moves.
#pragma once

#include <vector>

#include "core/status.h"
#include "transports/connector.h"

namespace braid::testing {

/// Progresses t's connectors to `peers` until every one of `requests` is done; the first
/// connector error, or a timeout after `seconds`. An idle round sleeps in waitForActivity for
/// at most `maxWaitMs`.
Status driveRequests(transport::Transport& t, const std::vector<int>& peers,
                     const std::vector<const transport::Request*>& requests, double seconds,
                     int maxWaitMs = 100);

/// Every rank of `nranks` but `self`.
std::vector<int> peersExcept(int self, int nranks);

/// The address of each request, for driveRequests.
std::vector<const transport::Request*> pointersTo(const std::vector<transport::Request>& requests);

}  // namespace braid::testing
