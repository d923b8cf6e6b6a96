// The tiny all-reduce: a latency path for all-reduces of at most
// BRAID_TINY_BYTES per rank (Config::tinyBytes; and at most kMaxInboundBytes
// arriving at each rank in all), and for barriers, on a
// shared-memory communicator of at most kMaxTinyRanks ranks. BRAID_TINY_BYTES=0
// turns it off; a BRAID_ALGO rule for the collective at the size wins over it.
//
// An 8-byte all-reduce between two ranks moves one cache line each way; what
// it costs on top is host bookkeeping. Measured on the direct path
// (comm/direct_collective.h), that bookkeeping was spread thin: the schedule
// cache lookup and runner restart, the runner's step and lane walk, the flight
// recorder copying the schedule list (atomic reference counts), clock reads.
// This path keeps only what the guarantees need:
//
//   phase 1 (exchange): every rank posts its whole input as one message to
//     every peer and one receive from every peer into its staging area, on
//     the ordinary connectors, and polls them until all are done. One round:
//     no rank waits on a partial result, which also suits ranks that share
//     cores (4 ranks on 2 cores wake each other once, not log2(n) times).
//   phase 2 (reduce): every rank combines the n inputs in rank order,
//     in0 op in1 op ... op in(n-1), then divides once for avg. All ranks run
//     the same kernels on the same bytes in the same order, so all get the
//     same bits (min/max with NaN and float sums included).
//
// Invariants the normal path gives and this one keeps:
//  - ordering: it uses the connectors' FIFOs (a message per peer and
//    direction, posted in call order), so a tiny call between large ones
//    matches the peer's messages exactly as a schedule would; a size mismatch
//    (mismatched calls) is the connector's error, naming the peer;
//  - failure: polling, waiting (IdleWait, Transport::waitForActivity), peer
//    death and abort detection, BRAID_TIMEOUT and stall diagnosis are those of
//    the direct path; a failure marks the communicator failed (call_failure.h);
//  - the flight recorder records the call (begin after the first poll, a
//    snapshot before sleeping, the end), with no schedule attached;
//  - the choice depends only on the op and settings every rank agrees on, never
//    on how a rank grouped the call: the calls the direct path hands to the
//    engine (grouped, BRAID_CHECK, the device proxy's) run the same exchange as
//    a schedule (scheduleFor), so one rank's grouped call meets its peer's
//    ungrouped one; a BRAID_ALGO rule that names all-reduce at this size wins over both.
//
// A barrier is an all-reduce of nothing: it takes phase 1 alone, with empty
// messages (a rank leaves once every peer's message has arrived, i.e. once
// every peer has entered), in one round instead of dissemination's log2(n).
//
// Requests and staging live in this object, one per communicator, so a
// connector never points at freed memory even after a failed call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectives/schedule.h"
#include "comm/op.h"
#include "core/selection_spec.h"
#include "core/status.h"
#include "transports/connector.h"

namespace braid {

class Comm;

class TinyAllReduce {
 public:
  /// Ranks beyond this pay (n-1) messages per rank where a tree pays log2(n).
  static constexpr int kMaxTinyRanks = 8;
  /// At most this much arrives at one rank per call, (n-1) x the message: one round saves
  /// the schedules' dependent steps, but every rank receives and reduces every other
  /// rank's whole message, so past a few KiB in the schedules' fewer bytes win
  /// (perf/RESULTS.md, "Algorithm choices").
  static constexpr size_t kMaxInboundBytes = 8 << 10;

  /// The path for `comm`, or null when the communicator cannot use it (a
  /// transport other than shm, one rank or more than kMaxTinyRanks, BRAID_TINY_BYTES=0).
  static std::unique_ptr<TinyAllReduce> createFor(Comm& comm);

  /// The largest all-reduce message per rank this path takes:
  /// min(BRAID_TINY_BYTES, kMaxInboundBytes / (nranks - 1)).
  size_t maxBytes() const { return maxBytes_; }

  /// Whether `op` (a validated collective on this path's communicator) runs here:
  /// an all-reduce of 1..maxBytes() bytes per rank, or a barrier.
  bool takes(const Op& op) const;

  /// Runs the all-reduce or barrier `op` to completion; on failure the communicator is
  /// marked failed and its peers are told, as on the direct path.
  Status run(const Op& op);

  /// The same exchange as a schedule ("exchange", collectives/algorithms/exchange_allreduce.cc),
  /// for an op takes() accepts that runs in the engine (grouped, BRAID_CHECK): whether a rank
  /// grouped a call must not change the messages its peers see.
  static std::shared_ptr<const coll::Schedule> scheduleFor(const coll::CollArgs& args);

 private:
  TinyAllReduce(Comm& comm, size_t maxBytes, SelectionSpec forced);

  // Phase 1: posts one send and one receive per peer and polls them until
  // all are done (pollUntilDone, with the exchange as its task).
  class ExchangeTask;
  // Phase 2: recv = in0 op in1 op ... (op avg: divided by nranks once).
  void reduceInRankOrder(const Op& op, size_t bytes);

  uint8_t* staged(int rank) { return stagingBase_ + static_cast<size_t>(rank) * slotBytes_; }

  Comm& comm_;
  const int rank_;
  const int nranks_;
  const size_t maxBytes_;
  SelectionSpec forced_;  // BRAID_ALGO as agreed: a rule for all-reduce wins over this path
  std::vector<transport::Connector*> connectors_;  // by rank; null for this rank
  std::vector<transport::Request> sends_, recvs_;  // by rank
  // nranks slots of slotBytes_ (maxBytes_ rounded up to a cache line, so that every slot
  // starts on one and 8-byte elements never straddle two) from stagingBase_.
  const size_t slotBytes_;
  std::vector<uint8_t> staging_;
  uint8_t* stagingBase_;  // staging_'s first cache-line boundary
};

}  // namespace braid
