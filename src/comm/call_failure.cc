#include "comm/call_failure.h"

#include <cstdio>

#include "comm/comm.h"

namespace braid {

void markCallFailed(Comm& comm, const Status& error) {
  comm.flightRecorder().end(error);
  comm.flightRecorder().print(
      (error.code() == braidTimeout ? "timeout: " : "failure: ") + error.message(), false);
  comm.fail(error);
  comm.setLastError(error.message());  // braidGroupEnd has no comm to report on
}

Status noProgressError(const char* api, int rank, double seconds, const std::string& pending) {
  char secs[32];
  std::snprintf(secs, sizeof(secs), "%g", seconds);
  return timeoutError(std::string(api) + " on rank " + std::to_string(rank) + ": no progress for " +
                      secs + " s (BRAID_TIMEOUT) in " + pending);
}

Status abortCalledError(int rank) {
  return Status(braidRemoteError, "braidCommAbort was called on rank " + std::to_string(rank));
}

Status inCall(const Status& status, const char* api, int rank) {
  return status.withContext(std::string(api) + " on rank " + std::to_string(rank));
}

}  // namespace braid
