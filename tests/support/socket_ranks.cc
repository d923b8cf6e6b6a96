#include "support/socket_ranks.h"

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
  Deadline deadline = Deadline::in(kSocketTestSeconds);
  while (true) {
    bool all = true;
    for (const transport::Request* r : requests) all &= r->done;
    if (all) return Status::ok();
    if (deadline.expired()) return timeoutError("test: requests did not complete");
    bool any = false;
    for (int p = 0; p < nranks; ++p) {
      transport::Connector* c = t.connector(p);
      if (c == nullptr) continue;
      bool progressed = false;
      BRAID_RETURN_IF_ERROR(c->progress(&progressed));
      any |= progressed;
    }
    if (!any) BRAID_RETURN_IF_ERROR(t.waitForActivity(deadline, 50));
  }
}

}  // namespace braid::testing
