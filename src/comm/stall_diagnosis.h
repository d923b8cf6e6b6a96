// Naming the rank a timed-out collective really waits for.
//
// When a rank stalls (SIGSTOP, a livelocked host), its neighbours time out
// waiting for it, but ranks further away time out waiting for a neighbour
// that is alive and itself stuck. So a rank whose wait passes BRAID_TIMEOUT
// first tells every peer whom it waits for (Transport::reportWait), waits a
// little for the other stuck ranks to say theirs, then follows the chain of
// reported waits (Transport::waitChain) and blames the rank at its end: the
// one that waits for nobody. With two ranks there is no chain: the peer is to
// blame at once. Shared by the group engine and the direct path, so a
// timeout reads the same whichever ran the call.
#pragma once

#include <string>

#include "comm/idle_wait.h"
#include "core/status.h"

namespace braid {

class Comm;

class StallDiagnosis {
 public:
  /// How long, after BRAID_TIMEOUT, a rank that reported its wait gives the
  /// other stuck ranks to report theirs.
  static constexpr double kReportSeconds = 2.0;

  /// Something moved: the next timeout starts a new report.
  void progressed() { reported_ = false; }

  /// The deadline of `idle` passed while `comm` waits for `peer` (-1: none
  /// known). Returns true when the caller should keep waiting: this rank has
  /// just reported its wait and `idle` is re-armed for kReportSeconds. False
  /// when the caller should fail with stallError().
  bool reportFirst(Comm& comm, int peer, IdleWait& idle);

 private:
  bool reported_ = false;
};

/// The timeout of `api` on `comm`, which waited `seconds` for `peer` doing
/// `pending`; blames the end of the chain of reported waits from `peer`.
Status stallError(Comm& comm, const char* api, double seconds, const std::string& pending,
                  int peer);

}  // namespace braid
