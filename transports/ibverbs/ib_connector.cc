// The ib connector's protocol: receiver-driven RDMA writes.
//
// Each posted receive asks for its data with clear-to-sends (SENDs of a
// ClearToSend, inline): a plain receive into memory the device can register
// exposes the user's buffer itself (registration cache), in pieces of up to
// kMaxCtsBytes; a reducing receive, or one into unregistrable memory, exposes
// receive staging slots of kStageBytes, one clear-to-send per slot, and
// reduces (or copies) each slot out when its data lands. The sender answers
// each clear-to-send, in order, with RDMA writes of up to kWriteBytes from its
// source (registered through the cache, else copied through send staging);
// the piece's last write carries an immediate, which completes on the
// receiver after every earlier write of the queue pair has landed (RC
// ordering), so one immediate per clear-to-send tells the receiver its piece
// is whole. Immediate kSizeMismatch instead says the sender's message has
// another size than the receiver's clear-to-send announced: both sides fail.
//
// Invariants: clear-to-sends go out in message order and within a message in
// offset order; the sender serves them in that order, so write completions
// on the receiver match ctsOut_ front to back. Receive slots posted
// (kRecvDepth) cover the peer's clear-to-sends in flight (<= kMaxCtsOut) plus
// the immediates answering ours (<= kMaxCtsOut), so no send meets an empty
// receive queue. Every send-queue entry is signaled and recorded in
// inFlight_; an RC queue pair completes them in posting order.
#include "transports/ibverbs/ib_connector.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

namespace braid::transport::ib {
namespace {

constexpr uint32_t kImmOk = 0;
constexpr uint32_t kSizeMismatch = 0xbad512e;
constexpr size_t kSlotBytes = 64;  // one receive slot: a ClearToSend fits
static_assert(sizeof(ClearToSend) <= kSlotBytes);
constexpr uint64_t kRecvFlag = uint64_t{1} << 31;

uint64_t wrId(uint32_t index, uint64_t low) { return (uint64_t{index} << 32) | low; }

}  // namespace

Result<std::unique_ptr<IbConnector>> IbConnector::create(int rank, int peer, uint32_t index,
                                                         IbDevice* dev, RegCache* cache) {
  std::unique_ptr<IbConnector> c(new IbConnector(rank, peer, index, dev, cache));
  BRAID_RETURN_IF_ERROR(c->init());
  return c;
}

Status IbConnector::init() {
  const VerbsApi& api = dev_->api();
  blockBytes_ = kRecvDepth * kSlotBytes + 2 * kStageSlots * kStageBytes;
  blockBytes_ = (blockBytes_ + 4095) & ~size_t{4095};
  if (::posix_memalign(reinterpret_cast<void**>(&block_), 4096, blockBytes_) != 0) {
    return Status(braidSystemError,
                  "ib transport: out of memory for rank " + std::to_string(peer_) + "'s staging");
  }
  std::memset(block_, 0, blockBytes_);
  blockMr_ =
      api.regMr(dev_->pd(), block_, blockBytes_, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (blockMr_ == nullptr) return verbsError("ibv_reg_mr of the staging buffers", errno);

  ibv_qp_init_attr qa{};
  qa.send_cq = dev_->cq();
  qa.recv_cq = dev_->cq();
  qa.qp_type = IBV_QPT_RC;
  qa.cap.max_send_wr = kSendDepth;
  qa.cap.max_recv_wr = kRecvDepth;
  qa.cap.max_send_sge = 1;
  qa.cap.max_recv_sge = 1;
  qa.cap.max_inline_data = sizeof(ClearToSend);
  qp_ = api.createQp(dev_->pd(), &qa);
  if (qp_ == nullptr) return verbsError("ibv_create_qp", errno);

  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = dev_->port().port;
  attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  if (int e = api.modifyQp(qp_, &attr,
                           IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
    return verbsError("ibv_modify_qp to INIT", e);
  }
  for (int s = 0; s < kRecvDepth; ++s) BRAID_RETURN_IF_ERROR(postRecvSlot(s));
  psn_ = std::random_device{}() & 0xffffff;
  return Status::ok();
}

IbConnector::~IbConnector() {
  const VerbsApi& api = dev_->api();
  if (qp_ != nullptr) api.destroyQp(qp_);
  for (SendMessage& m : sends_) {
    if (m.registered) cache_->release(m.mr);
  }
  for (RecvMessage& m : recvs_) {
    if (m.registered) cache_->release(m.mr);
  }
  if (blockMr_ != nullptr) api.deregMr(blockMr_);
  std::free(block_);
}

QpInfo IbConnector::localInfo() const {
  QpInfo info;
  info.qpn = qp_->qp_num;
  info.psn = psn_;
  info.gid = dev_->port().gid;
  info.lid = dev_->port().lid;
  info.mtu = static_cast<uint8_t>(dev_->port().mtu);
  info.ethernet = dev_->port().ethernet ? 1 : 0;
  return info;
}

Status IbConnector::connect(const QpInfo& remote) {
  const VerbsApi& api = dev_->api();
  if (remote.ethernet != (dev_->port().ethernet ? 1 : 0)) {
    return invalidUsage("ib transport: rank " + std::to_string(peer_) + "'s port is " +
                        (remote.ethernet ? "RoCE" : "InfiniBand") + ", this rank's (" +
                        dev_->describe() + ") is not: they cannot connect");
  }
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = static_cast<ibv_mtu>(std::min<int>(remote.mtu, dev_->port().mtu));
  attr.dest_qp_num = remote.qpn;
  attr.rq_psn = remote.psn;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.port_num = dev_->port().port;
  attr.ah_attr.dlid = remote.lid;
  if (remote.ethernet) {
    attr.ah_attr.is_global = 1;
    attr.ah_attr.grh.dgid = remote.gid;
    attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(dev_->port().gidIndex);
    attr.ah_attr.grh.hop_limit = 64;
  }
  if (int e = api.modifyQp(qp_, &attr,
                           IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                               IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
    return verbsError("ibv_modify_qp to RTR (is rank " + std::to_string(peer_) +
                          "'s GID reachable from " + dev_->describe() + "?)",
                      e);
  }
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = 14;   // 4.096 us * 2^14 = 67 ms per try
  attr.retry_cnt = 7;  // a silent peer fails after about half a second
  attr.rnr_retry = 7;  // never expected (receives cover every send), but not fatal
  attr.sq_psn = psn_;
  attr.max_rd_atomic = 1;
  if (int e = api.modifyQp(qp_, &attr,
                           IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                               IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)) {
    return verbsError("ibv_modify_qp to RTS", e);
  }
  return Status::ok();
}

Status IbConnector::verbsError(const std::string& what, int err) const {
  return Status(braidSystemError,
                "ib transport (rank " + std::to_string(rank_) + " to rank " +
                    std::to_string(peer_) + ", " + dev_->describe() + "): " + what + ": " +
                    std::strerror(err),
                peer_);
}

void IbConnector::fail(Status status) {
  if (error_.isOk() && !status.isOk()) error_ = std::move(status);
}

Status IbConnector::postRecvSlot(int slot) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(block_ + slot * kSlotBytes);
  sge.length = kSlotBytes;
  sge.lkey = blockMr_->lkey;
  ibv_recv_wr wr{};
  wr.wr_id = wrId(index_, kRecvFlag | static_cast<uint64_t>(slot));
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int e = ibv_post_recv(qp_, &wr, &bad)) return verbsError("ibv_post_recv", e);
  return Status::ok();
}

Status IbConnector::postSend(const void* src, size_t bytes, Request* req) {
  if (!error_.isOk()) return error_;
  if (src == nullptr && bytes > 0) return invalidArgument("ib transport: null send buffer");
  req->bytes = bytes;
  req->completed = 0;
  req->done = false;
  SendMessage m{static_cast<const uint8_t*>(src), bytes, req, nextSendSeq_++, {}};
  sends_.push_back(m);
  return Status::ok();
}

Status IbConnector::postRecv(const RecvSink& sink, size_t bytes, Request* req) {
  if (!error_.isOk()) return error_;
  if (sink.dst == nullptr && bytes > 0) return invalidArgument("ib transport: null receive buffer");
  req->bytes = bytes;
  req->completed = 0;
  req->done = false;
  RecvMessage m{sink, bytes, req, nextRecvSeq_++, {}};
  recvs_.push_back(m);
  return Status::ok();
}

Status IbConnector::progress(bool* progressed) {
  if (!error_.isOk()) return error_;
  if (pollFn_ != nullptr) BRAID_RETURN_IF_ERROR(pollFn_(pollArg_, progressed));
  pump(progressed);
  return error_;
}

void IbConnector::pump(bool* progressed) {
  if (!error_.isOk()) return;
  pumpRecvs(progressed);
  pumpSends(progressed);
  retire();
}

IbConnector::SendMessage* IbConnector::sendBySeq(uint64_t seq) {
  if (sends_.empty() || seq < sends_.front().seq) return nullptr;
  const uint64_t at = seq - sends_.front().seq;
  return at < sends_.size() ? &sends_[at] : nullptr;
}

IbConnector::RecvMessage* IbConnector::recvBySeq(uint64_t seq) {
  if (recvs_.empty() || seq < recvs_.front().seq) return nullptr;
  const uint64_t at = seq - recvs_.front().seq;
  return at < recvs_.size() ? &recvs_[at] : nullptr;
}

void IbConnector::pumpRecvs(bool* progressed) {
  for (RecvMessage& m : recvs_) {
    if (m.ctsIssued && m.requested == m.bytes) continue;  // fully asked for
    if (!m.modeChosen) {
      m.modeChosen = true;
      if (m.bytes > 0 && m.sink.reduce == nullptr) {
        Result<RegCache::Handle> h = cache_->acquire(m.sink.dst, m.bytes);
        if (h.isOk()) {
          m.mr = *h;
          m.registered = true;
        }
      }
      m.staged = m.bytes > 0 && !m.registered;
    }
    while (!(m.ctsIssued && m.requested == m.bytes)) {
      if (static_cast<int>(ctsOut_.size()) >= kMaxCtsOut ||
          static_cast<int>(inFlight_.size()) >= kSendDepth) {
        return;
      }
      ClearToSend cts{};
      cts.seq = m.seq;
      cts.msgBytes = m.bytes;
      cts.offset = m.requested;
      int slot = -1;
      size_t piece = std::min(m.bytes - m.requested, kMaxCtsBytes);
      if (m.staged) {
        for (int s = 0; s < kStageSlots && slot < 0; ++s) {
          if (!recvStageBusy_[s]) slot = s;
        }
        if (slot < 0) return;  // every slot waits for data; later pieces follow
        const size_t elem = std::max<size_t>(1, m.sink.elemSize);
        piece = std::min(piece, kStageBytes / elem * elem);
        cts.addr =
            reinterpret_cast<uintptr_t>(block_ + kRecvDepth * kSlotBytes + slot * kStageBytes);
        cts.rkey = blockMr_->rkey;
      } else if (m.bytes > 0) {
        cts.addr = reinterpret_cast<uintptr_t>(m.sink.dst + m.requested);
        cts.rkey = m.mr.mr->rkey;
      }
      cts.bytes = static_cast<uint32_t>(piece);
      ibv_sge sge{};
      sge.addr = reinterpret_cast<uintptr_t>(&cts);
      sge.length = sizeof cts;
      ibv_send_wr wr{};
      wr.wr_id = wrId(index_, 0);
      wr.sg_list = &sge;
      wr.num_sge = 1;
      wr.opcode = IBV_WR_SEND;
      wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
      ibv_send_wr* bad = nullptr;
      if (int e = ibv_post_send(qp_, &wr, &bad)) {
        fail(verbsError("ibv_post_send of a clear-to-send", e));
        return;
      }
      inFlight_.push_back(InFlight{false, m.seq, 0, -1, false});
      ctsOut_.push_back(CtsOut{m.seq, m.requested, piece, slot});
      if (slot >= 0) recvStageBusy_[slot] = true;
      m.requested += piece;
      m.ctsIssued = true;
      *progressed = true;
    }
  }
}

void IbConnector::pumpSends(bool* progressed) {
  while (!ctsIn_.empty() && static_cast<int>(inFlight_.size()) < kSendDepth) {
    const ClearToSend& cts = ctsIn_.front();
    SendMessage* m = sendBySeq(cts.seq);
    if (m == nullptr) return;  // the receiver is ahead: this send is not posted yet
    if (cts.msgBytes != m->bytes) {
      // Tell the receiver (a 0-byte write with the mismatch immediate), then fail here.
      ibv_send_wr wr{};
      wr.wr_id = wrId(index_, 0);
      wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
      wr.send_flags = IBV_SEND_SIGNALED;
      wr.imm_data = htonl(kSizeMismatch);
      wr.wr.rdma.remote_addr = cts.addr;
      wr.wr.rdma.rkey = cts.rkey;
      ibv_send_wr* bad = nullptr;
      (void)ibv_post_send(qp_, &wr, &bad);
      fail(Status(braidInvalidUsage,
                  "ib transport: rank " + std::to_string(peer_) + " expects a message of " +
                      std::to_string(cts.msgBytes) + " bytes from rank " + std::to_string(rank_) +
                      ", which sends " + std::to_string(m->bytes) + " bytes (mismatched calls?)",
                  peer_));
      return;
    }
    if (m->bytes > 0 && !m->registered && !m->staged) {
      Result<RegCache::Handle> h = cache_->acquire(m->src, m->bytes);
      if (h.isOk()) {
        m->mr = *h;
        m->registered = true;
      } else {
        m->staged = true;  // e.g. device memory without GPUDirect: copy through staging
      }
    }
    size_t piece = std::min<size_t>(cts.bytes - ctsInServed_, kWriteBytes);
    ibv_sge sge{};
    int slot = -1;
    const size_t at = cts.offset + ctsInServed_;
    if (piece > 0 && m->staged) {
      for (int s = 0; s < kStageSlots && slot < 0; ++s) {
        if (!sendStageBusy_[s]) slot = s;
      }
      if (slot < 0) return;
      piece = std::min(piece, kStageBytes);
      uint8_t* stage = block_ + kRecvDepth * kSlotBytes + (kStageSlots + slot) * kStageBytes;
      std::memcpy(stage, m->src + at, piece);
      sge.addr = reinterpret_cast<uintptr_t>(stage);
      sge.lkey = blockMr_->lkey;
    } else if (piece > 0) {
      sge.addr = reinterpret_cast<uintptr_t>(m->src + at);
      sge.lkey = m->mr.mr->lkey;
    }
    sge.length = static_cast<uint32_t>(piece);
    const bool lastOfCts = ctsInServed_ + piece == cts.bytes;
    ibv_send_wr wr{};
    wr.wr_id = wrId(index_, 0);
    wr.sg_list = piece > 0 ? &sge : nullptr;
    wr.num_sge = piece > 0 ? 1 : 0;
    wr.opcode = lastOfCts ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(kImmOk);
    wr.wr.rdma.remote_addr = cts.addr + ctsInServed_;
    wr.wr.rdma.rkey = cts.rkey;
    ibv_send_wr* bad = nullptr;
    if (int e = ibv_post_send(qp_, &wr, &bad)) {
      fail(verbsError("ibv_post_send of an RDMA write", e));
      return;
    }
    if (slot >= 0) sendStageBusy_[slot] = true;
    const bool lastOfMessage = lastOfCts && cts.offset + cts.bytes == cts.msgBytes;
    inFlight_.push_back(InFlight{true, m->seq, piece, slot, lastOfMessage});
    *progressed = true;
    if (lastOfCts) {
      ctsIn_.pop_front();
      ctsInServed_ = 0;
    } else {
      ctsInServed_ += piece;
    }
  }
}

void IbConnector::complete(const ibv_wc& wc) {
  if (wc.status != IBV_WC_SUCCESS) {
    const VerbsApi& api = dev_->api();
    std::string what = api.wcStatusStr(wc.status);
    std::string hint;
    if (wc.status == IBV_WC_RETRY_EXC_ERR || wc.status == IBV_WC_RNR_RETRY_EXC_ERR) {
      hint = "; rank " + std::to_string(peer_) + " stopped answering (it may have failed)";
    } else if (wc.status == IBV_WC_REM_ACCESS_ERR || wc.status == IBV_WC_REM_INV_REQ_ERR) {
      hint = "; rank " + std::to_string(peer_) + " refused the access";
    }
    fail(Status(braidRemoteError,
                "ib transport: a work request between rank " + std::to_string(rank_) +
                    " and rank " + std::to_string(peer_) + " failed: " + what + " (status " +
                    std::to_string(wc.status) + ", vendor error " + std::to_string(wc.vendor_err) +
                    ")" + hint,
                peer_));
    return;
  }
  if ((wc.wr_id & kRecvFlag) != 0) {
    const int slot = static_cast<int>(wc.wr_id & 0xffff);
    if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
      onWriteLanded(ntohl(wc.imm_data));
    } else {
      ClearToSend cts;
      std::memcpy(&cts, block_ + slot * kSlotBytes, sizeof cts);
      ctsIn_.push_back(cts);
    }
    if (error_.isOk()) fail(postRecvSlot(slot));
    return;
  }
  onSendCompleted();
}

void IbConnector::onWriteLanded(uint32_t imm) {
  if (ctsOut_.empty()) {
    fail(remoteError("ib transport: rank " + std::to_string(peer_) +
                         " wrote data this rank never asked for (protocol error)",
                     peer_));
    return;
  }
  const CtsOut c = ctsOut_.front();
  ctsOut_.pop_front();
  RecvMessage* m = recvBySeq(c.seq);
  if (imm == kSizeMismatch) {
    fail(Status(braidInvalidUsage,
                "ib transport: rank " + std::to_string(peer_) +
                    " sends a message whose size differs from the " +
                    std::to_string(m != nullptr ? m->bytes : 0) + " bytes rank " +
                    std::to_string(rank_) + " expects (mismatched calls?)",
                peer_));
    return;
  }
  if (m == nullptr) {
    fail(internalError("ib transport: a write landed for a finished receive"));
    return;
  }
  if (c.stageSlot >= 0) {
    const uint8_t* stage = block_ + kRecvDepth * kSlotBytes + c.stageSlot * kStageBytes;
    const RecvSink& s = m->sink;
    if (s.reduce != nullptr) {
      s.reduce(s.dst + c.offset, s.accum + c.offset, stage, c.bytes / s.elemSize);
    } else {
      std::memcpy(s.dst + c.offset, stage, c.bytes);
    }
    recvStageBusy_[c.stageSlot] = false;
  }
  m->landed += c.bytes;
  m->req->completed = m->landed;
  if (m->landed == m->bytes && m->requested == m->bytes) m->done = true;
}

void IbConnector::onSendCompleted() {
  if (inFlight_.empty()) {
    fail(internalError("ib transport: a send completion nothing was waiting for"));
    return;
  }
  const InFlight f = inFlight_.front();
  inFlight_.pop_front();
  if (!f.isWrite) return;  // a clear-to-send went out
  if (f.stageSlot >= 0) sendStageBusy_[f.stageSlot] = false;
  SendMessage* m = sendBySeq(f.seq);
  if (m == nullptr) return;
  m->acked += f.bytes;
  m->req->completed = m->acked;
  if (f.last) m->done = true;
}

void IbConnector::retire() {
  while (!sends_.empty() && sends_.front().done) {
    SendMessage& m = sends_.front();
    if (m.registered) cache_->release(m.mr);
    m.req->done = true;
    sends_.pop_front();
  }
  while (!recvs_.empty() && recvs_.front().done) {
    RecvMessage& m = recvs_.front();
    if (m.registered) cache_->release(m.mr);
    m.req->done = true;
    recvs_.pop_front();
  }
}

}  // namespace braid::transport::ib
