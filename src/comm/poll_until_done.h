// The wait loop of a call that one communicator drives by itself (the direct
// path's schedule runner, the tiny all-reduce's exchange): poll; when nothing
// moved spin, yield, then sleep in the transport (IdleWait); a wait past
// BRAID_TIMEOUT first gets one stall report (StallDiagnosis), then fails
// naming the peer it waits for; abort() ends the wait. The engine has its own
// loop: it drives several communicators' work at once.
//
// A template so that the latency path pays no indirect call per poll.
#pragma once

#include <string>

#include "comm/call_failure.h"
#include "comm/comm.h"
#include "comm/idle_wait.h"
#include "comm/stall_diagnosis.h"
#include "core/status.h"

namespace braid {

/// Polls `work` until it is done; errors come back with `apiName` named, as the
/// engine words them. `Work` provides:
///   Status progress(bool* progressed);  one poll
///   bool done() const;
///   int pendingPeer() const;            whom a timeout blames (-1: nobody)
///   std::string describePending() const;
///   void recordBegin();     after the first poll, which posted this rank's first
///                           sends: the peers wait for those, not for bookkeeping
///   void recordSnapshot();  before a sleep: what a signal or a timeout would print
template <typename Work>
Status pollUntilDone(Comm& comm, const char* apiName, Work& work) {
  IdleWait idle(comm.config().timeoutSeconds, comm.spinRounds());
  StallDiagnosis stall;
  bool recorded = false;
  while (true) {
    bool progressed = false;
    Status s = work.progress(&progressed);
    if (!recorded) {
      work.recordBegin();
      recorded = true;
    }
    if (!s.isOk()) return inCall(s, apiName, comm.rank());
    if (work.done()) return Status::ok();
    if (progressed) {
      idle.progressed();
      stall.progressed();
      continue;
    }
    if (comm.abortRequested()) return abortCalledError(comm.rank());
    if (idle.expired()) {
      const int peer = work.pendingPeer();
      if (stall.reportFirst(comm, peer, idle)) continue;
      return stallError(comm, apiName, idle.timeoutSeconds(), work.describePending(), peer);
    }
    if (idle.pauseBriefly()) continue;
    work.recordSnapshot();
    transport::Transport* t = comm.transport();
    s = t != nullptr ? t->waitForActivity(idle.deadline(), 100)
                     : internalError("a single-rank communicator waits for a peer");
    if (!s.isOk()) return inCall(s, apiName, comm.rank());
  }
}

}  // namespace braid
