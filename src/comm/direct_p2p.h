// Sends and receives as one cheap task: the braidSend/braidRecv calls of one
// group (or one ungrouped call) on one communicator, posted straight on the
// peers' connectors in call order and polled until done. runOps
// (comm/engine.h) chooses it wherever supports() admits the calls, and runs
// everything else as the engine's group task.
//
// The engine runs them as a stage of one-action schedules, one runner each,
// which costs a schedule, a runner and their vectors per call: for a small
// message that allocation and bookkeeping, not the transfer, sets the time
// (perf/RESULTS.md, "Algorithm choices"). Here the requests, the peer
// list and its marks live in this object, reused from call to call: after the
// first call of a size, no allocation.
//
// The same messages as the engine's: one message per call, of the call's
// bytes, posted in call order on the peer's connector, so a rank whose group
// takes this path meets a peer whose group the engine runs (a group that also
// holds a collective, or a send to itself). Waiting, timeouts, stall reports,
// aborts and failure reporting are the wait loop's (comm/poll_until_done.h)
// and call_failure.h's, as on the direct collective path; the flight recorder
// records the call with no schedule attached, as for the tiny all-reduce.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "comm/op.h"
#include "core/status.h"
#include "transports/connector.h"

namespace braid {

class Comm;

class DirectPointToPoint {
 public:
  explicit DirectPointToPoint(Comm& comm) : comm_(comm) {}

  /// Whether `ops` (validated calls) run here: sends and receives only, all on
  /// this path's communicator, none to this rank itself.
  bool supports(std::span<const Op> ops) const;

  /// Runs `ops`, which supports() admits, to completion on a healthy communicator
  /// (comm/run_task.h). On failure the communicator is marked failed and its peers are
  /// told, as in the engine.
  Status run(std::span<const Op> ops);

 private:
  // One call's sends and receives as a task (comm/task.h) over the requests below.
  class CallTask;

  Comm& comm_;
  std::vector<transport::Request> requests_;   // one per op; connectors point here
  std::vector<transport::Connector*> pumped_;  // each peer's connector once, in first-use order
  std::vector<char> marked_;                   // by rank: its connector is in pumped_
};

}  // namespace braid
