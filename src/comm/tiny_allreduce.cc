#include "comm/tiny_allreduce.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "collectives/algorithms/builders.h"
#include "comm/call_failure.h"
#include "comm/comm.h"
#include "comm/core_spreading.h"
#include "comm/poll_until_done.h"
#include "core/config.h"
#include "core/kernels/reduce.h"
#include "core/log.h"
#include "core/types.h"

namespace braid {
namespace {

constexpr size_t kCacheLine = 64;

}  // namespace

std::unique_ptr<TinyAllReduce> TinyAllReduce::createFor(Comm& comm) {
  const Config& config = comm.config();
  const int n = comm.nranks();
  transport::Transport* t = comm.transport();
  if (config.tinyBytes == 0 || n < 2 || n > kMaxTinyRanks || t == nullptr ||
      std::strcmp(t->name(), "shm") != 0) {
    return nullptr;
  }
  const size_t maxBytes = std::min(config.tinyBytes, kMaxInboundBytes / (n - 1));
  return std::unique_ptr<TinyAllReduce>(
      new TinyAllReduce(comm, maxBytes, comm.overrides().algorithm));
}

TinyAllReduce::TinyAllReduce(Comm& comm, size_t maxBytes, SelectionSpec forced)
    : comm_(comm),
      rank_(comm.rank()),
      nranks_(comm.nranks()),
      maxBytes_(maxBytes),
      forced_(std::move(forced)),
      connectors_(nranks_, nullptr),
      sends_(nranks_),
      recvs_(nranks_),
      slotBytes_((maxBytes + kCacheLine - 1) / kCacheLine * kCacheLine),
      staging_(static_cast<size_t>(nranks_) * slotBytes_ + kCacheLine),
      stagingBase_(staging_.data() +
                   (kCacheLine - reinterpret_cast<uintptr_t>(staging_.data()) % kCacheLine) %
                       kCacheLine) {
  for (int peer = 0; peer < nranks_; ++peer) {
    if (peer != rank_) connectors_[peer] = comm.transport()->connector(peer);
  }
}

std::shared_ptr<const coll::Schedule> TinyAllReduce::scheduleFor(const coll::CollArgs& args) {
  return std::make_shared<const coll::Schedule>(coll::buildExchangeAllReduce(args));
}

bool TinyAllReduce::takes(const Op& op) const {
  if (op.kind != OpKind::kCollective) return false;
  if (op.coll == coll::CollKind::kBarrier) {
    return forced_.empty() || forced_.pick("barrier", 0).empty();
  }
  if (op.coll != coll::CollKind::kAllReduce) return false;
  const size_t bytes = op.count * typeSize(op.type);
  if (bytes == 0 || bytes > maxBytes_) return false;
  return forced_.empty() || forced_.pick("allreduce", bytes).empty();
}

// The exchange of one call as a task (comm/task.h): its requests and staging
// are the TinyAllReduce's, which outlives any call.
class TinyAllReduce::ExchangeTask : public OneCommTask {
 public:
  ExchangeTask(TinyAllReduce& tiny, const Op& op, size_t bytes)
      : OneCommTask(tiny.comm_, op.apiName), tiny_(tiny), op_(op), bytes_(bytes) {}

  // Receives first: a peer's message that is already in the FIFO lands at
  // the first poll. The own input goes out unchanged to every peer.
  Status post() {
    for (int peer = 0; peer < tiny_.nranks_; ++peer) {
      if (peer == tiny_.rank_) continue;
      transport::RecvSink sink;
      sink.dst = tiny_.staged(peer);
      transport::Connector* c = tiny_.connectors_[peer];
      BRAID_RETURN_IF_ERROR(c->postRecv(sink, bytes_, &tiny_.recvs_[peer]));
      BRAID_RETURN_IF_ERROR(c->postSend(op_.send, bytes_, &tiny_.sends_[peer]));
    }
    return Status::ok();
  }

  Status progress(bool* progressed) {
    for (int peer = 0; peer < tiny_.nranks_; ++peer) {
      if (peer == tiny_.rank_) continue;
      bool moved = false;
      BRAID_RETURN_IF_ERROR(tiny_.connectors_[peer]->progress(&moved));
      *progressed = *progressed || moved;
    }
    return Status::ok();
  }

  bool done() const {
    for (int peer = 0; peer < tiny_.nranks_; ++peer) {
      if (peer != tiny_.rank_ && !(tiny_.recvs_[peer].done && tiny_.sends_[peer].done)) {
        return false;
      }
    }
    return true;
  }

  // The first unfinished receive's peer, else the first unfinished send's.
  int pendingPeer() const {
    for (int peer = 0; peer < tiny_.nranks_; ++peer) {
      if (peer != tiny_.rank_ && !tiny_.recvs_[peer].done) return peer;
    }
    for (int peer = 0; peer < tiny_.nranks_; ++peer) {
      if (peer != tiny_.rank_ && !tiny_.sends_[peer].done) return peer;
    }
    return -1;
  }

  std::string describePending() const {
    std::string out = "tiny exchange";
    for (int peer = 0; peer < tiny_.nranks_; ++peer) {
      if (peer == tiny_.rank_) continue;
      const transport::Request& r = tiny_.recvs_[peer];
      const transport::Request& s = tiny_.sends_[peer];
      if (!s.done) {
        out += ", send to rank " + std::to_string(peer) + " (" + std::to_string(s.completed) + "/" +
               std::to_string(s.bytes) + " bytes)";
      }
      if (!r.done) {
        out += ", recv from rank " + std::to_string(peer) + " (" + std::to_string(r.completed) +
               "/" + std::to_string(r.bytes) + " bytes)";
      }
    }
    return out;
  }

  void recordBegin() { comm_.flightRecorder().begin(op_, 1, false, FlightRecorder::kNoSchedules); }
  void recordSnapshot() { comm_.flightRecorder().snapshot(FlightRecorder::kNoRunners); }

 private:
  TinyAllReduce& tiny_;
  const Op& op_;
  const size_t bytes_;
};

Status TinyAllReduce::run(const Op& op) {
  const bool barrier = op.coll == coll::CollKind::kBarrier;
  const size_t bytes = barrier ? 0 : op.count * typeSize(op.type);
  comm_.enter();
  if (comm_.placesRanks()) placeForCall(bytes);
  BRAID_TRACE("%s: %zu elements, tiny, 1 steps", op.apiName, op.count);
  ExchangeTask exchange(*this, op, bytes);
  Status s = pollUntilDone(exchange);
  if (s.isOk()) {
    if (!barrier) reduceInRankOrder(op, bytes);
    comm_.flightRecorder().end(s);
  } else {
    comm_.flightRecorder().snapshot(FlightRecorder::kNoRunners);
    markCallFailed(comm_, s);
  }
  comm_.leave();
  return s;
}

void TinyAllReduce::reduceInRankOrder(const Op& op, size_t bytes) {
  auto* out = static_cast<uint8_t*>(op.recv);
  // In place, the own input is overwritten by the first combine; a rank past
  // 1 still needs it later, so it joins the staging area first.
  if (op.send == op.recv && rank_ >= 2) std::memcpy(staged(rank_), op.send, bytes);
  auto input = [&](int r) -> const uint8_t* {
    if (r == rank_ && !(op.send == op.recv && rank_ >= 2)) {
      return static_cast<const uint8_t*>(op.send);
    }
    return staged(r);
  };
  const coll::ReduceFn combine = coll::reducerFor(op.type, op.op);
  combine(out, input(0), input(1), op.count);  // out may alias one input exactly: allowed
  for (int r = 2; r < nranks_; ++r) combine(out, out, input(r), op.count);
  if (op.op == braidAvg) coll::dividerFor(op.type)(out, op.count, nranks_);
}

}  // namespace braid
