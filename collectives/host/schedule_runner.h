// The host executor: runs one rank's Schedule over a Transport.
//
// The runner walks the schedule step by step. Entering a step starts every
// action whose `after` dependency is met, in action order; a transfer never
// overtakes an earlier, not yet started transfer of the step on the same
// connector and direction, which keeps the FIFO matching rule. Local copies
// and divisions run at once. progress() pumps the connectors this
// step waits on and starts dependent actions as their predecessors finish.
//
// A local copy runs in pieces of kCopyPieceBytes with the step's busy
// connectors pumped between them: a large copy (all-to-all's own block) must
// not leave the peers' FIFOs full or empty while it runs, or both ranks stall
// in turn; between pieces this rank keeps draining and refilling its slots.
//
// Bookkeeping is linear in the step's actions (pairwise all-to-all puts every
// chunk of a block, 64 at 128 MiB, in one step): the transfers of a step are
// grouped into lanes, one per (peer, direction), each with its actions in
// order, a count of those started (they start in order: the FIFO rule) and a
// cursor past those done. A connector is pumped when one of its lanes has a
// started transfer that is not done, i.e. when its done cursor is short of its
// started count; the step is over when every lane's cursor is at its end.
// Nothing here blocks: the caller (the group engine) owns waiting, deadlines
// and aborts, so one thread can drive many runners on many communicators.
//
// Posting ahead (Transport::postsAhead, the ib transport): once every action of
// the current step has started, the next step's transfers are posted at once
// when that step is transfers only and touches no byte the current step writes,
// nor writes a byte the current step reads (compared by address, so an in-place
// call's send and recv alias). Posting in action order behind the current
// step's transfers keeps the FIFO rule; the link then has the next chunk queued
// when the current one completes instead of draining until both ranks wake up.
// Entering that step adopts the requests already posted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/schedule.h"
#include "core/kernels/reduce.h"
#include "core/status.h"
#include "transports/connector.h"

namespace braid::coll {

/// The memory a schedule's BufferIds stand for, with sizes for bounds checks.
struct Buffers {
  const uint8_t* send = nullptr;
  uint8_t* recv = nullptr;
  uint8_t* scratch = nullptr;
  size_t sendBytes = 0, recvBytes = 0, scratchBytes = 0;
};

class ScheduleRunner {
 public:
  /// The piece size of local copies (one shm FIFO slot by default): large enough that a
  /// pump between pieces costs little, small enough that the peer's FIFO keeps moving.
  static constexpr size_t kCopyPieceBytes = 128 << 10;

  /// `transport` may be null only when the schedule has no transfers.
  /// The transport, buffers and schedule must outlive the runner.
  ScheduleRunner(transport::Transport* transport, const Schedule* schedule, Buffers buffers,
                 braidDataType_t type, braidRedOp_t op, int nranks);

  /// Moves what can move now. *progressed is set when anything moved.
  Status progress(bool* progressed);

  bool done() const { return step_ >= schedule_->steps.size(); }

  /// Runs the same schedule again from its first step over `buffers` (same
  /// sizes, new addresses), keeping this runner's allocations. Only once the
  /// previous run is done, or failed on a communicator that no longer runs
  /// anything: a connector may still point at the previous run's requests.
  void restart(const Buffers& buffers) {
    buffers_ = buffers;
    step_ = 0;
    entered_ = false;
    ahead_ = false;
    aheadRefused_ = SIZE_MAX;
  }

  /// What the current step is waiting for, for timeout messages.
  std::string describePending() const;

  /// The peer the current step waits for: its first unfinished receive's,
  /// else its first unfinished send's (*receiving says which); -1 when none.
  /// A timeout blames it.
  int pendingPeer(bool* receiving) const;

  /// The step in progress (steps.size() once done) and the bytes action `i` of
  /// it has moved so far: what the flight recorder shows of a stalled collective.
  size_t stepIndex() const { return step_; }
  size_t movedBytes(size_t i) const {
    if (!entered_ || i >= requests_.size()) return 0;
    return requests_[i].done ? requests_[i].bytes : requests_[i].completed;
  }

 private:
  // The transfers of the current step on one connector in one direction.
  struct Lane {
    std::vector<uint32_t> actions;  // indices into the step's actions, in order
    size_t started = 0;             // actions[0, started) have started
    size_t doneUpTo = 0;            // actions[0, doneUpTo) are done
    /// Moves doneUpTo past finished requests; true while a started one is not done.
    bool inFlight(const std::vector<transport::Request>& requests);
  };
  // One peer of the current step: its receive lane and its send lane.
  struct PeerLanes {
    int peer = -1;
    Lane lanes[2];  // [0]: receives (kRecv, kRecvReduce), [1]: sends
  };

  Status enterStep();
  /// Posts the next step's transfers when postsAhead_ and postAheadSafe() allow.
  Status postAhead(bool* progressed);
  /// True when step `next` is transfers only and shares no written byte with step `next - 1`.
  bool postAheadSafe(size_t next) const;
  /// The bytes action `a` reads and writes (address ranges; empty when it names none).
  struct Range {
    const uint8_t* begin;
    const uint8_t* end;
  };
  bool touched(const Action& a, std::vector<Range>* reads, std::vector<Range>* writes) const;
  /// Posts transfer `a` (kSend, kRecv, kRecvReduce) on its connector.
  Status postTransfer(const Action& a, transport::Request* req);
  /// Groups the current step's transfers into lanes (peers_, peerSlot_, laneIndex_).
  Status buildLanes();
  /// Starts, in action order, every action whose predecessors allow it.
  Status startReady(bool* progressed);
  // The helpers below run for every action of every step: inline.
  bool canStart(size_t index) const {
    const Action& a = schedule_->steps[step_].actions[index];
    if (a.after >= 0 && !requests_[a.after].done) return false;
    if (laneIndex_[index] < 0) return true;
    // Connectors are FIFO per direction: a transfer may not overtake an earlier
    // one of the step on the same connector and direction that has not started,
    // so only the first unstarted transfer of its lane may start.
    const Lane& lane = laneOf(index);
    return lane.actions[lane.started] == index;
  }
  Lane& laneOf(size_t index) { return peers_[laneIndex_[index] / 2].lanes[laneIndex_[index] % 2]; }
  const Lane& laneOf(size_t index) const {
    return peers_[laneIndex_[index] / 2].lanes[laneIndex_[index] % 2];
  }
  static bool isTransfer(const Action& a) { return a.peer >= 0; }
  Status start(size_t index, bool* progressed);
  /// Pumps once each connector with a started, unfinished transfer of this step.
  Status pumpConnectors(bool* progressed);
  /// A local copy of non-overlapping ranges, in pieces with the connectors pumped between.
  Status copyLocal(uint8_t* dst, const uint8_t* src, size_t n, bool streaming, bool* progressed);
  Result<uint8_t*> resolve(const Span& span, bool writable) const;
  size_t bufferBytes(BufferId id) const;

  transport::Transport* const transport_;  // owned by the communicator, outlives every op
  const Schedule* const schedule_;         // owned by the caller's op, outlives the runner
  Buffers buffers_;
  const size_t elemSize_;
  const ReduceFn reduce_;
  const ReduceFn reduceStreaming_;  // for receive-reduces into buffers of >= streamStoreBytes_
  const DivideFn divide_;
  const int nranks_;
  const size_t streamStoreBytes_;  // the transport's; 0: local copies never stream
  const bool postsAhead_;          // the transport's Transport::postsAhead()
  /// Steps past this many actions are never posted ahead: the overlap check is quadratic.
  static constexpr size_t kMaxAheadActions = 64;

  size_t step_ = 0;
  bool entered_ = false;
  std::vector<transport::Request> requests_;  // one per action of the current step
  std::vector<uint32_t> waiting_;   // the current step's actions not started yet, in order
  std::vector<PeerLanes> peers_;    // the current step's peers, the first peersUsed_ of them
  size_t peersUsed_ = 0;            // (entries past it keep their vectors' capacity)
  std::vector<int> peerSlot_;       // comm rank -> index into peers_, -1: not in this step
  std::vector<int32_t> laneIndex_;  // per action: peers_ index * 2 + direction; -1: local
  bool ahead_ = false;              // step_ + 1's transfers are posted, into aheadRequests_
  size_t aheadRefused_ = SIZE_MAX;  // the step postAheadSafe() last turned down
  std::vector<transport::Request> aheadRequests_;  // swapped into requests_ (pointers stay)
  std::vector<int> aheadPeers_;                    // the peers of those transfers
};

}  // namespace braid::coll
