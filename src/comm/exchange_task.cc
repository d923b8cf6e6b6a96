#include "comm/exchange_task.h"

#include <cstring>
#include <string>

#include "comm/comm.h"
#include "core/kernels/reduce.h"
#include "core/types.h"

namespace braid {
namespace {

constexpr size_t kCacheLine = 64;

}  // namespace

ExchangeTask::ExchangeTask(Comm& comm, size_t bytes)
    : OneCommTask(comm, ""),
      rank_(comm.rank()),
      nranks_(comm.nranks()),
      bytes_(bytes),
      connectors_(nranks_, nullptr),
      sends_(nranks_),
      recvs_(nranks_),
      slotBytes_((bytes + kCacheLine - 1) / kCacheLine * kCacheLine),
      staging_(static_cast<size_t>(nranks_) * slotBytes_ + kCacheLine),
      stagingBase_(staging_.data() +
                   (kCacheLine - reinterpret_cast<uintptr_t>(staging_.data()) % kCacheLine) %
                       kCacheLine) {
  for (int peer = 0; peer < nranks_; ++peer) {
    if (peer != rank_) connectors_[peer] = comm.transport()->connector(peer);
  }
}

// The first unfinished receive's peer, else the first unfinished send's.
int ExchangeTask::pendingPeer() const {
  for (int peer = 0; peer < nranks_; ++peer) {
    if (peer != rank_ && !recvs_[peer].done) return peer;
  }
  for (int peer = 0; peer < nranks_; ++peer) {
    if (peer != rank_ && !sends_[peer].done) return peer;
  }
  return -1;
}

std::string ExchangeTask::describePending() const {
  std::string out = "exchange";
  for (int peer = 0; peer < nranks_; ++peer) {
    if (peer == rank_) continue;
    const transport::Request& r = recvs_[peer];
    const transport::Request& s = sends_[peer];
    if (!s.done) {
      out += ", send to rank " + std::to_string(peer) + " (" + std::to_string(s.completed) + "/" +
             std::to_string(s.bytes) + " bytes)";
    }
    if (!r.done) {
      out += ", recv from rank " + std::to_string(peer) + " (" + std::to_string(r.completed) + "/" +
             std::to_string(r.bytes) + " bytes)";
    }
  }
  return out;
}

void ExchangeTask::finish() {
  const Op& op = *op_;
  if (op.coll == coll::CollKind::kBarrier) return;
  auto* out = static_cast<uint8_t*>(op.recv);
  // In place, the own input is overwritten by the first combine; a rank past
  // 1 still needs it later, so it joins the staging area first.
  const bool keepOwn = op.send == op.recv && rank_ >= 2;
  if (keepOwn) std::memcpy(staged(rank_), op.send, bytes_);
  auto input = [&](int r) -> const uint8_t* {
    if (r == rank_ && !keepOwn) return static_cast<const uint8_t*>(op.send);
    return staged(r);
  };
  const coll::ReduceFn combine = coll::reducerFor(op.type, op.op);
  combine(out, input(0), input(1), op.count);  // out may alias one input exactly: allowed
  for (int r = 2; r < nranks_; ++r) combine(out, out, input(r), op.count);
  if (op.op == braidAvg) coll::dividerFor(op.type)(out, op.count, nranks_);
}

}  // namespace braid
