#include "support/socket_ranks.h"

#include "support/drive_requests.h"

namespace braid::testing {

Config socketConfig(int streams, const std::string& ifname, bool tls) {
  Config c;
  c.timeoutSeconds = kSocketTestSeconds;
  c.socketStreams = streams;
  c.socketIfname = ifname;
  c.socketTls = tls;
  return c;
}

std::vector<Status> runRanks(int nranks,
                             const std::function<Status(int, transport::Bootstrap&)>& fn,
                             LocalBootstrapGroup* group) {
  LocalBootstrapGroup own(nranks, kSocketTestSeconds);
  return statusesOnRankThreads(group != nullptr ? *group : own, fn);
}

Status driveRequests(transport::Transport& t, int nranks,
                     const std::vector<const transport::Request*>& requests) {
  std::vector<int> peers;
  for (int p = 0; p < nranks; ++p) {
    if (t.connector(p) != nullptr) peers.push_back(p);
  }
  return driveRequests(t, peers, requests, kSocketTestSeconds, 50);
}

}  // namespace braid::testing
