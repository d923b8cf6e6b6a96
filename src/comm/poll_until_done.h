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
  bool progressed = false;
  s = task.progress(&progressed);
  task.recordBegin();  // the first poll posted this rank's first sends
  if (!s.isOk()) return inCall(s, task.api(), task.waitingOn().rank());
  if (task.done()) return Status::ok();
  // Waiting: only now is its policy read (the spin length asks the thread's placement).
  const WaitPolicy policy = task.waitPolicy();
  IdleWait idle(policy.timeoutSeconds, policy.spinRounds);
  StallDiagnosis stall;
  while (true) {
    if (progressed) {
      idle.progressed();
      stall.progressed();
    } else if (Comm* aborted = task.aborted()) {
      return abortCalledError(aborted->rank());
    } else if (idle.expired()) {
      Comm& comm = task.waitingOn();
      const int peer = task.pendingPeer();
      if (!stall.reportFirst(comm, peer, idle)) {
        return stallError(comm, task.api(), idle.timeoutSeconds(), task.describePending(), peer);
      }
    } else if (!idle.pauseBriefly()) {
      task.recordSnapshot();
      Comm& comm = task.waitingOn();
      transport::Transport* t = comm.transport();
      s = t != nullptr ? t->waitForActivity(idle.deadline(), policy.sleepMs)
                       : internalError("a single-rank communicator waits for a peer");
      if (!s.isOk()) return inCall(s, task.api(), comm.rank());
    }
    progressed = false;
    s = task.progress(&progressed);
    if (!s.isOk()) return inCall(s, task.api(), task.waitingOn().rank());
    if (task.done()) return Status::ok();
  }
}

}  // namespace braid
