// The one wait loop: every host call, alone or a group, runs its task
// (comm/task.h) here. Post; poll; when nothing moved spin, yield, then sleep
// in the transport (IdleWait); a wait past BRAID_TIMEOUT first gets one stall
// report (StallDiagnosis), then fails naming the peer it waits for;
// braidCommAbort ends the wait. The caller marks the communicators failed on
// an error (call_failure.h): only it knows which ones the call involved.
//
// A template so that the latency path pays no indirect call per poll.
#pragma once

#include "comm/call_failure.h"
#include "comm/comm.h"
#include "comm/idle_wait.h"
#include "comm/stall_diagnosis.h"
#include "comm/task.h"
#include "core/status.h"

namespace braid {

/// Posts `task` and polls it until it is done; errors come back with the call
/// and the rank named ("<api> on rank <r>: ...").
template <Task T>
Status pollUntilDone(T& task) {
  Status s = task.post();
  if (!s.isOk()) return inCall(s, task.api(), task.waitingOn().rank());
  const WaitPolicy policy = task.waitPolicy();
  IdleWait idle(policy.timeoutSeconds, policy.spinRounds);
  StallDiagnosis stall;
  bool recorded = false;
  while (true) {
    bool progressed = false;
    s = task.progress(&progressed);
    if (!recorded) {
      task.recordBegin();
      recorded = true;
    }
    if (!s.isOk()) return inCall(s, task.api(), task.waitingOn().rank());
    if (task.done()) return Status::ok();
    if (progressed) {
      idle.progressed();
      stall.progressed();
      continue;
    }
    if (Comm* aborted = task.aborted()) return abortCalledError(aborted->rank());
    Comm& comm = task.waitingOn();
    if (idle.expired()) {
      const int peer = task.pendingPeer();
      if (stall.reportFirst(comm, peer, idle)) continue;
      return stallError(comm, task.api(), idle.timeoutSeconds(), task.describePending(), peer);
    }
    if (idle.pauseBriefly()) continue;
    task.recordSnapshot();
    transport::Transport* t = comm.transport();
    s = t != nullptr ? t->waitForActivity(idle.deadline(), policy.sleepMs)
                     : internalError("a single-rank communicator waits for a peer");
    if (!s.isOk()) return inCall(s, task.api(), comm.rank());
  }
}

}  // namespace braid
