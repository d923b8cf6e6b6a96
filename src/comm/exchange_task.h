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
// Requests and staging live in an ExchangeCall (comm/exchange_call.h), kept by the schedule
// cache's entry for the call's shape.
#pragma once

#include <string>

#include "comm/comm.h"
#include "comm/exchange_call.h"
#include "comm/op.h"
#include "comm/task.h"
#include "core/status.h"
#include "transports/connector.h"

namespace braid {

// Phase 1 of one call as a task (comm/task.h): its requests and staging are the
// ExchangeCall's, which outlives any call. Phase 2 is ExchangeCall::reduce.
class ExchangeTask : public OneCommTask {
 public:
  ExchangeTask(Comm& comm, ExchangeCall& call, const Op& op)
      : OneCommTask(comm, op.apiName), call_(call), op_(op) {}

  // Receives first: a peer's message that is already in the FIFO lands at the first poll.
  // The own input goes out unchanged to every peer.
  Status post() {
    for (int peer = 0; peer < call_.nranks_; ++peer) {
      if (peer == call_.rank_) continue;
      transport::RecvSink sink;
      sink.dst = call_.staged(peer);
      transport::Connector* c = call_.connectors_[peer];
      BRAID_RETURN_IF_ERROR(c->postRecv(sink, call_.bytes_, &call_.recvs_[peer]));
      BRAID_RETURN_IF_ERROR(c->postSend(op_.send, call_.bytes_, &call_.sends_[peer]));
    }
    return Status::ok();
  }

  Status progress(bool* progressed) {
    for (int peer = 0; peer < call_.nranks_; ++peer) {
      if (peer == call_.rank_) continue;
      bool moved = false;
      BRAID_RETURN_IF_ERROR(call_.connectors_[peer]->progress(&moved));
      *progressed = *progressed || moved;
    }
    return Status::ok();
  }

  bool done() const {
    for (int peer = 0; peer < call_.nranks_; ++peer) {
      if (peer != call_.rank_ && !(call_.recvs_[peer].done && call_.sends_[peer].done)) {
        return false;
      }
    }
    return true;
  }

  int pendingPeer() const;
  std::string describePending() const;
  void recordBegin() { comm_.flightRecorder().begin(op_, 1, false, FlightRecorder::kNoSchedules); }
  void recordSnapshot() { comm_.flightRecorder().snapshot(FlightRecorder::kNoRunners); }

 private:
  ExchangeCall& call_;
  const Op& op_;
};

}  // namespace braid
