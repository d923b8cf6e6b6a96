// Forked ranks for the multi-process tests.
//
// The parent forks every child before it touches braid (a child forked from a
// process that already runs library threads could inherit a held lock), then
// creates the unique id and writes it down one pipe per child. Children can
// report milestones through a second pipe, so that the parent can act (kill a
// rank) at a known point. waitAll() enforces a deadline and SIGKILLs stragglers,
// so no test leaves a process behind.
#pragma once

#include <sys/types.h>

#include <functional>
#include <vector>

#include "braid.h"

namespace braid::testing {

struct ChildExit {
  bool exited = false;  // exited normally; `code` is valid
  int code = -1;
  int signal = 0;        // the signal that ended it, if any
  bool overdue = false;  // still running at the deadline (then SIGKILLed)
  double seconds = 0;    // when it ended, from the start of waitAll
};

class RankProcesses {
 public:
  explicit RankProcesses(int nranks);
  ~RankProcesses();
  RankProcesses(const RankProcesses&) = delete;
  RankProcesses& operator=(const RankProcesses&) = delete;

  /// Forks one child per rank; child `rank` runs childMain(rank) and exits with
  /// its return value. Returns false (after killing any started child) on failure.
  bool start(const std::function<int(int rank)>& childMain);

  /// start(childMain), then sends every child a new unique id (braidGetUniqueId): the usual
  /// beginning of a test, whose children call receiveUniqueId first.
  bool startWithUniqueId(const std::function<int(int rank)>& childMain);

  /// Parent: sends `id` to every child.
  bool sendUniqueId(const braidUniqueId& id);
  /// Child: blocks until the parent's unique id arrives.
  bool receiveUniqueId(int rank, braidUniqueId* id);
  /// Child: receives the id, then joins the communicator of every rank as `rank`
  /// (braidCommInitRank); null, after a line on stderr, when either fails.
  braidComm_t joinCommunicator(int rank);

  /// Parent: lets child `rank` go on past awaitRelease (after, say, killing a peer).
  void release(int rank);
  /// Child: blocks until the parent releases it; false when the parent is gone.
  bool awaitRelease(int rank);

  /// Child: tells the parent it reached the agreed milestone.
  void signalProgress(int rank);
  /// Parent: waits until every rank in `ranks` signalled, at most `seconds`.
  bool waitProgress(const std::vector<int>& ranks, double seconds);

  pid_t pid(int rank) const { return pids_[rank]; }

  /// Parent: reaps every child (or only those in `ranks`, when not empty),
  /// SIGKILLing those still alive after `seconds`. Entries of ranks not
  /// waited for are left default.
  std::vector<ChildExit> waitAll(double seconds, const std::vector<int>& ranks = {});

 private:
  int nranks_;
  std::vector<pid_t> pids_;
  std::vector<int>
      idPipes_;  // [2 * rank] read end (child), [2 * rank + 1] write end; also releases
  std::vector<int> progressPipes_;  // [2 * rank] read end (parent), [2 * rank + 1] write end
};

}  // namespace braid::testing
