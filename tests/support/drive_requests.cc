#include "support/drive_requests.h"

namespace braid::testing {

Status driveRequests(transport::Transport& t, const std::vector<int>& peers,
                     const std::vector<const transport::Request*>& requests, double seconds,
                     int maxWaitMs) {
  Deadline deadline = Deadline::in(seconds);
  while (true) {
    bool any = false;
    for (int peer : peers) {
      bool moved = false;
      BRAID_RETURN_IF_ERROR(t.connector(peer)->progress(&moved));
      any |= moved;
    }
    bool all = true;
    for (const transport::Request* r : requests) all &= r->done;
    if (all) return Status::ok();
    if (deadline.expired()) return timeoutError("test: requests still pending");
    if (!any) BRAID_RETURN_IF_ERROR(t.waitForActivity(deadline, maxWaitMs));
  }
}

std::vector<int> peersExcept(int self, int nranks) {
  std::vector<int> peers;
  for (int p = 0; p < nranks; ++p) {
    if (p != self) peers.push_back(p);
  }
  return peers;
}

std::vector<const transport::Request*> pointersTo(const std::vector<transport::Request>& requests) {
  std::vector<const transport::Request*> pointers;
  pointers.reserve(requests.size());
  for (const transport::Request& r : requests) pointers.push_back(&r);
  return pointers;
}

}  // namespace braid::testing
