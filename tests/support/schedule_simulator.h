// A pure, in-memory simulator that runs every rank's schedule of one
// collective together and checks the rules of collectives/schedule.h.
//
// Each rank gets real memory laid out as the C API would hand it over (send
// and recv overlapping exactly as an in-place call makes them), so builders
// are tested against physical aliasing, not just symbolic buffer names.
// Connectors are modelled as one FIFO of messages per ordered pair of ranks.
// A rank runs the actions of its current step as soon as their `after`
// predecessor is done and the earlier actions on the same connector have been
// posted, and moves to the next step when all are done. With rendezvous
// buffering a send completes only when its receive consumes it, which is the
// strictest setting for deadlocks: a schedule that passes it passes any
// connector buffer size.
//
// Checked, each failure an error naming rank, step and action:
//   - spans inside their buffer (send / recv sizes from algorithm.h, scratch
//     from the schedule), in whole elements, `after` pointing backwards;
//   - per ordered pair, sends and receives match one-to-one with equal sizes
//     (the FIFO rule), and no message exceeds one chunk;
//   - within a step, no action writes memory another unordered action of the
//     same step reads or writes (physically, after in-place aliasing);
//   - a transfer that waits on `after` is the step's last on its connector and
//     direction (executors post the others at once; FIFO order must hold);
//   - no deadlock (no rank can advance while some are unfinished), no message
//     left unreceived, and every rank picked the same algorithm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/schedule.h"
#include "core/status.h"

namespace braid::testing {

/// One rank's user memory: send and recv point into `memory` (or are null).
struct SimRank {
  coll::CollArgs args;
  std::vector<uint8_t> memory;
  long sendOffset = -1;  // -1: no send buffer (a null pointer)
  long recvOffset = -1;  // -1: no recv buffer
  uint8_t* send() { return sendOffset < 0 ? nullptr : memory.data() + sendOffset; }
  uint8_t* recv() { return recvOffset < 0 ? nullptr : memory.data() + recvOffset; }
};

/// Lays out the buffers `args` describes for args.rank, aliased as args.inPlace says
/// (AllGather: send = recv + rank * bytes; ReduceScatter: recv = send + rank * bytes;
/// Gather / Scatter root: the root's block; others: send == recv). Fills memory with `fill`.
SimRank makeSimRank(const coll::CollArgs& args, uint8_t fill = 0xA5);

enum class Buffering {
  kRendezvous,  // a send completes when its receive consumes it
  kEager,       // a send completes when posted (unbounded connector buffers)
};

/// Checks the FIFO matching rule statically: for every ordered pair of ranks the
/// sends and the peer's receives pair up one-to-one, in order, with equal sizes.
Status checkMatching(const std::vector<coll::Schedule>& schedules);

/// Runs schedules[r] on ranks[r] for all ranks together; see the file comment.
Status runSchedules(std::vector<SimRank>& ranks, const std::vector<coll::Schedule>& schedules,
                    Buffering buffering = Buffering::kRendezvous);

/// Builds each rank's schedule with coll::buildSchedule(ranks[r].args, algorithm) and
/// runs them. `built`, when given, receives the schedules.
Status simulateCollective(std::vector<SimRank>& ranks, const std::string& algorithm,
                          Buffering buffering = Buffering::kRendezvous,
                          std::vector<coll::Schedule>* built = nullptr);

}  // namespace braid::testing
