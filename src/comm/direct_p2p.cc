#include "comm/direct_p2p.h"

#include <algorithm>

#include "comm/call_failure.h"
#include "comm/comm.h"
#include "comm/core_spreading.h"
#include "comm/poll_until_done.h"
#include "core/log.h"
#include "core/types.h"

namespace braid {
namespace {

size_t bytesOf(const Op& op) { return op.count * typeSize(op.type); }

}  // namespace

bool DirectPointToPoint::takes(std::span<const Op> ops) const {
  if (ops.empty() || comm_.transport() == nullptr) return false;
  return std::all_of(ops.begin(), ops.end(), [&](const Op& op) {
    return op.kind != OpKind::kCollective && op.comm == &comm_ && op.peer != comm_.rank();
  });
}

Status DirectPointToPoint::run(std::span<const Op> ops) {
  BRAID_RETURN_IF_ERROR(comm_.health());
  // The engine names the last call of a send/receive stage; so does this path.
  const char* api = ops.back().apiName;
  comm_.enter();
  if (comm_.placesRanks()) {
    size_t largest = 0;
    for (const Op& op : ops) largest = std::max(largest, bytesOf(op));
    placeForCall(largest);
  }
  BRAID_TRACE("%s: %zu sends/receives, direct", api, ops.size());
  ops_ = ops;
  Status s = post();
  s = s.isOk() ? pollUntilDone(comm_, api, *this) : inCall(s, api, comm_.rank());
  if (s.isOk()) {
    comm_.flightRecorder().end(s);
  } else {
    comm_.flightRecorder().snapshot(FlightRecorder::kNoRunners);
    markCallFailed(comm_, s);
  }
  ops_ = {};
  comm_.leave();
  return s;
}

Status DirectPointToPoint::post() {
  // Grown only here, between calls: a connector never holds a request of a call in
  // flight then (a failed call leaves the communicator failed, and no call runs again).
  requests_.assign(ops_.size(), transport::Request{});
  marked_.assign(comm_.nranks(), 0);
  pumped_.clear();
  for (size_t i = 0; i < ops_.size(); ++i) {
    const Op& op = ops_[i];
    transport::Connector* c = comm_.transport()->connector(op.peer);
    if (!marked_[op.peer]) {
      marked_[op.peer] = 1;
      pumped_.push_back(c);
    }
    if (op.kind == OpKind::kSend) {
      BRAID_RETURN_IF_ERROR(c->postSend(op.send, bytesOf(op), &requests_[i]));
    } else {
      transport::RecvSink sink;
      sink.dst = static_cast<uint8_t*>(op.recv);
      sink.extentBytes = bytesOf(op);  // as the engine's runner tells it: large ones stream
      BRAID_RETURN_IF_ERROR(c->postRecv(sink, bytesOf(op), &requests_[i]));
    }
  }
  return Status::ok();
}

Status DirectPointToPoint::progress(bool* progressed) {
  for (transport::Connector* c : pumped_) {
    bool moved = false;
    BRAID_RETURN_IF_ERROR(c->progress(&moved));
    *progressed = *progressed || moved;
  }
  return Status::ok();
}

bool DirectPointToPoint::done() const {
  return std::all_of(requests_.begin(), requests_.end(),
                     [](const transport::Request& r) { return r.done; });
}

int DirectPointToPoint::pendingPeer() const {
  int sendPeer = -1;
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (requests_[i].done) continue;
    if (ops_[i].kind == OpKind::kRecv) return ops_[i].peer;
    if (sendPeer < 0) sendPeer = ops_[i].peer;
  }
  return sendPeer;
}

std::string DirectPointToPoint::describePending() const {
  std::string out;
  for (size_t i = 0; i < ops_.size(); ++i) {
    const transport::Request& r = requests_[i];
    if (r.done) continue;
    out += out.empty() ? "" : ", ";
    out += ops_[i].kind == OpKind::kSend ? "send to rank " : "recv from rank ";
    out += std::to_string(ops_[i].peer) + " (" + std::to_string(r.completed) + "/" +
           std::to_string(r.bytes) + " bytes)";
  }
  return out.empty() ? "nothing" : out;
}

void DirectPointToPoint::recordBegin() {
  comm_.flightRecorder().begin(ops_.front(), static_cast<int>(ops_.size()), false,
                               FlightRecorder::kNoSchedules);
}

void DirectPointToPoint::recordSnapshot() {
  comm_.flightRecorder().snapshot(FlightRecorder::kNoRunners);
}

}  // namespace braid
