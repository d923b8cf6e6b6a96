// A host call in flight, as the one wait loop (comm/poll_until_done.h) drives it.
//
// Every way a host call runs is a task: a cached collective's schedule runner
// (comm/direct_collective.cc), the exchange run without a runner (comm/exchange_task.h), sends
// and receives posted straight on the connectors (comm/direct_p2p.h), and the
// engine's stages over one or several communicators (comm/engine.cc). A task
// posts what it can, moves when polled and says when it is done; while it
// waits it names the communicator, the call and the peer it waits for, and
// records itself in the flight recorder. The loop owns the rest, the same for
// every task: spin, yield, sleep in the transport, the deadline (BRAID_TIMEOUT)
// and its stall report, braidCommAbort, and the wording of errors.
//
// A concept, not a virtual base: the latency path pays no indirect call per poll.
#pragma once

#include <concepts>
#include <string>

#include "comm/comm.h"
#include "core/status.h"

namespace braid {

/// How a task's wait is bounded and spent (comm/idle_wait.h).
struct WaitPolicy {
  double timeoutSeconds;  // BRAID_TIMEOUT, counted from the last progress
  int spinRounds;         // idle polls spent spinning before yielding
  int sleepMs;            // the longest sleep in the transport per idle round
};

template <typename T>
concept Task = requires(T& task, const T& view, bool* progressed) {
  // The first messages; errors come back named after api() by the loop. A task
  // whose first progress() posts (a schedule runner) does nothing here.
  { task.post() } -> std::same_as<Status>;
  // One poll; *progressed is set when anything moved.
  { task.progress(progressed) } -> std::same_as<Status>;
  { view.done() } -> std::same_as<bool>;
  // The communicator and the call the task waits on now (for a group: the
  // first one not done, or the one whose progress failed), which a timeout or
  // an error names, and whose transport the loop sleeps in.
  { task.waitingOn() } -> std::same_as<Comm&>;
  { view.api() } -> std::same_as<const char*>;
  // A communicator of the task on which braidCommAbort was called, else null.
  { task.aborted() } -> std::same_as<Comm*>;
  // Whom a timeout blames (-1: nobody) and what it prints.
  { view.pendingPeer() } -> std::same_as<int>;
  { view.describePending() } -> std::same_as<std::string>;
  // The flight recorder: recordBegin() after the first poll, which posted this
  // rank's first sends (the peers wait for those, not for bookkeeping);
  // recordSnapshot() before a sleep: what a signal or a timeout would print.
  { task.recordBegin() } -> std::same_as<void>;
  { task.recordSnapshot() } -> std::same_as<void>;
  { view.waitPolicy() } -> std::same_as<WaitPolicy>;
};

/// The parts of a task on one communicator that every such task words alike.
class OneCommTask {
 public:
  OneCommTask(Comm& comm, const char* api) : comm_(comm), api_(api) {}
  Comm& waitingOn() { return comm_; }
  const char* api() const { return api_; }
  Comm* aborted() { return comm_.abortRequested() ? &comm_ : nullptr; }
  WaitPolicy waitPolicy() const {
    return {comm_.config().timeoutSeconds, comm_.spinRounds(), kSleepMs};
  }

 protected:
  // A sleep in the transport ends at the latest this often: it wakes anyway
  // when a peer rings, and the loop rechecks the deadline and aborts.
  static constexpr int kSleepMs = 100;

  Comm& comm_;  // the caller holds a lease or an enter() on it for the whole call
  const char* api_;
};

}  // namespace braid
