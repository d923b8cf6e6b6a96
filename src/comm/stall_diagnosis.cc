#include "comm/stall_diagnosis.h"

#include <algorithm>
#include <vector>

#include "comm/call_failure.h"
#include "comm/comm.h"

namespace braid {

bool StallDiagnosis::reportFirst(Comm& comm, int peer, IdleWait& idle) {
  transport::Transport* t = comm.transport();
  if (reported_ || t == nullptr || peer < 0 || comm.nranks() <= 2) return false;
  t->reportWait(peer);
  reported_ = true;
  idle.rearm(std::min(idle.timeoutSeconds(), kReportSeconds));
  return true;
}

Status stallError(Comm& comm, const char* api, double seconds, const std::string& pending,
                  int peer) {
  const Status plain = noProgressError(api, comm.rank(), seconds, pending);
  transport::Transport* t = comm.transport();
  const std::vector<int> chain =
      t != nullptr && peer >= 0 ? t->waitChain(peer) : std::vector<int>{peer};
  if (chain.size() <= 1) return timeoutError(plain.message(), peer);
  std::string what = plain.message() + "; rank " + std::to_string(chain[0]);
  for (size_t i = 1; i < chain.size(); ++i) {
    what += (i == 1 ? " waits for rank " : ", which waits for rank ") + std::to_string(chain[i]);
  }
  what += ", which reported no wait: rank " + std::to_string(chain.back()) + " stalled";
  return timeoutError(what, chain.back());
}

}  // namespace braid
