#include "comm/direct_p2p.h"

#include <algorithm>

#include "comm/comm.h"
#include "comm/poll_until_done.h"
#include "comm/run_task.h"
#include "core/log.h"
#include "core/types.h"

namespace braid {
namespace {

size_t bytesOf(const Op& op) { return op.count * typeSize(op.type); }

}  // namespace

bool DirectPointToPoint::supports(std::span<const Op> ops) const {
  if (ops.empty() || comm_.transport() == nullptr) return false;
  return std::all_of(ops.begin(), ops.end(), [&](const Op& op) {
    return op.kind != OpKind::kCollective && op.comm == &comm_ && op.peer != comm_.rank();
  });
}

// One call's sends and receives as a task (comm/task.h). The requests, the
// peer list and its marks are the DirectPointToPoint's, reused from call to call.
class DirectPointToPoint::CallTask : public OneCommTask {
 public:
  CallTask(DirectPointToPoint& p2p, std::span<const Op> ops, const char* api)
      : OneCommTask(p2p.comm_, api), p2p_(p2p), ops_(ops) {}

  Status post() {
    // Grown only here, between calls: a connector never holds a request of a call in
    // flight then (a failed call leaves the communicator failed, and no call runs again).
    p2p_.requests_.assign(ops_.size(), transport::Request{});
    p2p_.marked_.assign(comm_.nranks(), 0);
    p2p_.pumped_.clear();
    for (size_t i = 0; i < ops_.size(); ++i) {
      const Op& op = ops_[i];
      transport::Connector* c = comm_.transport()->connector(op.peer);
      if (!p2p_.marked_[op.peer]) {
        p2p_.marked_[op.peer] = 1;
        p2p_.pumped_.push_back(c);
      }
      if (op.kind == OpKind::kSend) {
        BRAID_RETURN_IF_ERROR(c->postSend(op.send, bytesOf(op), &p2p_.requests_[i]));
      } else {
        transport::RecvSink sink;
        sink.dst = static_cast<uint8_t*>(op.recv);
        sink.extentBytes = bytesOf(op);  // as the engine's runner tells it: large ones stream
        BRAID_RETURN_IF_ERROR(c->postRecv(sink, bytesOf(op), &p2p_.requests_[i]));
      }
    }
    return Status::ok();
  }

  Status progress(bool* progressed) {
    for (transport::Connector* c : p2p_.pumped_) {
      bool moved = false;
      BRAID_RETURN_IF_ERROR(c->progress(&moved));
      *progressed = *progressed || moved;
    }
    return Status::ok();
  }

  bool done() const {
    return std::all_of(p2p_.requests_.begin(), p2p_.requests_.end(),
                       [](const transport::Request& r) { return r.done; });
  }

  // The first unfinished receive's peer, else the first unfinished send's; -1 when none.
  int pendingPeer() const {
    int sendPeer = -1;
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (p2p_.requests_[i].done) continue;
      if (ops_[i].kind == OpKind::kRecv) return ops_[i].peer;
      if (sendPeer < 0) sendPeer = ops_[i].peer;
    }
    return sendPeer;
  }

  std::string describePending() const {
    std::string out;
    for (size_t i = 0; i < ops_.size(); ++i) {
      const transport::Request& r = p2p_.requests_[i];
      if (r.done) continue;
      out += out.empty() ? "" : ", ";
      out += ops_[i].kind == OpKind::kSend ? "send to rank " : "recv from rank ";
      out += std::to_string(ops_[i].peer) + " (" + std::to_string(r.completed) + "/" +
             std::to_string(r.bytes) + " bytes)";
    }
    return out.empty() ? "nothing" : out;
  }

  void recordBegin() {
    comm_.flightRecorder().begin(ops_.front(), static_cast<int>(ops_.size()), false,
                                 FlightRecorder::kNoSchedules);
  }
  void recordSnapshot() { comm_.flightRecorder().snapshot(FlightRecorder::kNoRunners); }

 private:
  DirectPointToPoint& p2p_;
  const std::span<const Op> ops_;
};

Status DirectPointToPoint::run(std::span<const Op> ops) {
  // The engine names the last call of a send/receive stage; so does this path.
  const char* api = ops.back().apiName;
  size_t largest = 0;
  for (const Op& op : ops) largest = std::max(largest, bytesOf(op));
  BRAID_TRACE("%s: %zu sends/receives, direct", api, ops.size());
  CallTask task(*this, ops, api);
  return runTask(comm_, task, largest);
}

}  // namespace braid
