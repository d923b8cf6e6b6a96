// The exchange all-reduce ("exchange", collectives/algorithms/exchange_allreduce.cc) run
// without a schedule runner: the latency path of a blocking tiny all-reduce or barrier.
// Selection (collectives/select.h) picks "exchange" like any registry algorithm; where a
// cached call outside a group runs it, it runs here; in the engine (grouped calls,
// BRAID_CHECK, the device proxy's) its schedule runs, with the same messages.
//
// An 8-byte all-reduce between two ranks moves one cache line each way; what it costs on
// top is host bookkeeping: a runner's step and lane walk, the flight recorder copying the
// schedule list (atomic reference counts), clock reads. This keeps only what the
// guarantees need:
//
//   phase 1 (exchange): every rank posts its whole input as one message to every peer and
//     one receive from every peer into its staging area, on the ordinary connectors, and
//     polls them until all are done. One round: no rank waits on a partial result, which
//     also suits ranks that share cores (4 ranks on 2 cores wake each other once, not
//     log2(n) times).
//   phase 2 (reduce): every rank combines the n inputs in rank order,
//     in0 op in1 op ... op in(n-1), then divides once for avg. All ranks run the same
//     kernels on the same bytes in the same order, so all get the same bits (min/max with
//     NaN and float sums included).
//
// Invariants the schedule runner gives and this keeps:
//  - ordering: it uses the connectors' FIFOs (a message per peer and direction, posted in
//    call order), so a tiny call between large ones matches the peer's messages exactly as
//    a schedule would; a size mismatch (mismatched calls) is the connector's error, naming
//    the peer;
//  - failure: polling, waiting, peer death and abort detection, BRAID_TIMEOUT and stall
//    diagnosis are the one wait loop's (comm/poll_until_done.h); a failure marks the
//    communicator failed (call_failure.h);
//  - the flight recorder records the call (begin after the first poll, a snapshot before
//    sleeping, the end), with no schedule attached.
//
// A barrier is an all-reduce of nothing: phase 1 alone, with empty messages (a rank leaves
// once every peer's message has arrived, i.e. once every peer has entered), in one round
// instead of dissemination's log2(n).
//
// The schedule cache (comm/schedule_cache.h) makes one per shape and hands it out bound to
// each call, ready to post. Its requests and staging live in it, kept by the cache's entry,
// so a connector never points at freed memory, even after a failed call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "comm/comm.h"
#include "comm/op.h"
#include "comm/task.h"
#include "core/status.h"
#include "transports/connector.h"

namespace braid {

class ExchangeTask : public OneCommTask {
 public:
  /// For calls of `bytes` per rank (0: a barrier) on `comm`, which has a transport.
  ExchangeTask(Comm& comm, size_t bytes);

  /// Ready to post for `op` (a call of this task's shape).
  void bind(const Op& op) {
    op_ = &op;
    api_ = op.apiName;
  }

  // Phase 1. Receives first: a peer's message that is already in the FIFO lands at the
  // first poll. The own input goes out unchanged to every peer.
  Status post() {
    for (int peer = 0; peer < nranks_; ++peer) {
      if (peer == rank_) continue;
      transport::RecvSink sink;
      sink.dst = staged(peer);
      transport::Connector* c = connectors_[peer];
      BRAID_RETURN_IF_ERROR(c->postRecv(sink, bytes_, &recvs_[peer]));
      BRAID_RETURN_IF_ERROR(c->postSend(op_->send, bytes_, &sends_[peer]));
    }
    return Status::ok();
  }

  Status progress(bool* progressed) {
    for (int peer = 0; peer < nranks_; ++peer) {
      if (peer == rank_) continue;
      bool moved = false;
      BRAID_RETURN_IF_ERROR(connectors_[peer]->progress(&moved));
      *progressed = *progressed || moved;
    }
    return Status::ok();
  }

  bool done() const {
    for (int peer = 0; peer < nranks_; ++peer) {
      if (peer != rank_ && !(recvs_[peer].done && sends_[peer].done)) return false;
    }
    return true;
  }

  /// Phase 2, once done(): recv = in0 op in1 op ... (op avg: divided by nranks once).
  /// Nothing for a barrier.
  void finish();

  int pendingPeer() const;
  std::string describePending() const;
  void recordBegin() { comm_.flightRecorder().begin(*op_, 1, false, FlightRecorder::kNoSchedules); }
  void recordSnapshot() { comm_.flightRecorder().snapshot(FlightRecorder::kNoRunners); }

 private:
  uint8_t* staged(int rank) { return stagingBase_ + static_cast<size_t>(rank) * slotBytes_; }

  const Op* op_ = nullptr;  // the call bound last
  const int rank_;
  const int nranks_;
  const size_t bytes_;
  std::vector<transport::Connector*> connectors_;  // by rank; null for this rank
  std::vector<transport::Request> sends_, recvs_;  // by rank
  // nranks slots of slotBytes_ (bytes_ rounded up to a cache line, so that every slot
  // starts on one and 8-byte elements never straddle two) from stagingBase_.
  const size_t slotBytes_;
  std::vector<uint8_t> staging_;
  uint8_t* stagingBase_;  // staging_'s first cache-line boundary
};

}  // namespace braid
