// The ib connector's protocol: receiver-driven RDMA writes.
//
// Each posted receive asks for its data with clear-to-sends (SENDs of a
// ClearToSend, inline): a plain receive into memory the device can register
// exposes the user's buffer itself (registration cache), in pieces of up to
// kMaxCtsBytes; a reducing receive, or one into unregistrable memory, exposes
// receive staging slots of kStageBytes, one clear-to-send per slot, and
// reduces (or copies) each slot out when its data lands. The sender answers
// each clear-to-send with RDMA writes of up to kWriteBytes from its source
// (registered through the cache, else copied through send staging); the
// piece's last write carries an immediate naming the clear-to-send, which
// completes on the receiver after every earlier write of the queue pair has
// landed (RC ordering), so one immediate per clear-to-send tells the receiver
// its piece is whole. An immediate with kImmMismatch instead says the sender's
// message has another size than the receiver's clear-to-send announced: both
// sides fail.
//
// Credits. A receive is posted only when the collective reaches its step, so
// with clear-to-sends alone a small message idles at the sender for a round
// trip that costs more than the message itself. The receiver therefore grants
// credits ahead (BRAID_IB_CREDITS, default 2): each names one of the next
// messages it has not posted a receive for and a buffer of creditBytes_
// (BRAID_IB_CREDIT_BYTES, default kDefaultCreditBytes) of its own. A message
// that fits is written there whole as soon as the sender posts it (in several
// writes from send staging, the last one with the immediate), with an immediate
// carrying its size and that it ended there; the receive, once posted, checks
// that size against its own and copies (or reduces) it out. Such a message
// completes on the sender without waiting for the receiver. A larger message
// answers its credit with an empty write (an immediate saying "0 bytes, not
// complete", which frees the credit) and goes zero-copy: the receive's
// clear-to-send exposes the user's buffer and the sender writes all of it there
// (creditHead()). Copying a large message out of a credit would cost the
// receiver's CPU a pass over every byte, which is what a CPU-bound link (soft
// RoCE; the memory bus of a busy host) has least of; its round trip is hidden
// by steps posted ahead (the runner posts the next step's receive while the
// current one is in flight). A size mismatch still fails both sides: the
// receiver sees it in the credit's immediate and sends a clear-to-send
// announcing its size, which the sender rejects (also for a message it
// finished).
//
// Striping (BRAID_IB_QPS_PER_PEER > 1). The link has several queue pairs;
// queue pair 0 carries every clear-to-send, credit, credit write and mismatch
// notice, so the invariants below hold on it unchanged. A clear-to-send's
// range of at least 2 * kMinStripeBytes is split by the receiver into
// contiguous stripes (stripePlan(), announced in stripeBytes), stripe i
// written on queue pair i, each ending with a write with the immediate of the
// clear-to-send. Writes on different queue pairs land in no particular order,
// so the receiver counts the immediates and calls the piece landed only at
// the last of its stripes (RC ordering within each queue pair makes each
// stripe whole by its immediate). The sender, likewise, calls a message sent
// only when every write it posted for it completed, whichever queue pair
// finished last. Each queue pair has receives posted for the immediates (only
// queue pair 0 receives SENDs); any failed completion fails the link.
//
// Invariants: clear-to-sends and credits go out in message order and within a
// message in offset order (a credit, the head, before the rest); the sender
// serves them in arrival order, skipping those whose message it has not posted
// (a credit for a later message must not hold up the rest of the current one),
// so the pieces of one message are written in order. Receive slots posted
// (kRecvDepth) cover the peer's clear-to-sends and credits in flight (<=
// kMaxCtsOut + kMaxCredits, plus one mismatch notice) plus the immediates
// answering ours (as many), so no send meets an empty receive queue (the
// striping queue pairs see at most kMaxCtsOut immediates each). Every
// send-queue entry is recorded in its queue pair's inFlight_; an RC queue pair
// completes them in posting order. Writes are signaled (a send is done when all
// its writes are);
// clear-to-sends and credits mostly not (a collective grants one credit per
// chunk, and each completion can wake a sleeping rank for nothing): a signaled
// completion retires the unsignaled entries before it, and every
// kMaxUnsignaled + 1-th clear-to-send in a row is signaled, so they never fill
// the send queue.
#include "transports/ibverbs/ib_connector.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "core/log.h"

namespace braid::transport::ib {
namespace {

// The immediate: the id of the clear-to-send it answers, flags, and a credit's byte count.
constexpr uint32_t kImmIdMask = 0x3f;
constexpr uint32_t kImmMismatch = 1u << 6;
constexpr uint32_t kImmComplete = 1u << 7;  // a credit's write ends the message
constexpr int kImmBytesShift = 8;
static_assert(IbConnector::kMaxCreditBytes < (size_t{1} << (32 - kImmBytesShift)));
static_assert(IbConnector::kMaxCtsOut + IbConnector::kMaxCredits <= kImmIdMask);
constexpr uint16_t kNoAnswer = 0xff;  // a mismatch notice: answered by nothing
static_assert(kNoAnswer > kImmIdMask);
constexpr size_t kSlotBytes = 64;  // one receive slot: a ClearToSend fits
static_assert(sizeof(ClearToSend) <= kSlotBytes);
constexpr uint64_t kRecvFlag = uint64_t{1} << 31;
constexpr int kQpShift = 16;  // a work request id's queue pair, above a receive's slot
constexpr uint64_t kNoMessage = ~uint64_t{0};

uint64_t wrId(uint32_t index, int qp, uint64_t low) {
  return (uint64_t{index} << 32) | (static_cast<uint64_t>(qp) << kQpShift) | low;
}

}  // namespace

StripePlan stripePlan(size_t bytes, int qps) {
  StripePlan plan;
  if (qps <= 1 || bytes < 2 * kMinStripeBytes) return plan;
  // Equal shares, rounded up to whole pages (so stripes start page-aligned when the
  // buffer does), never below kMinStripeBytes.
  size_t per = (bytes + qps - 1) / static_cast<size_t>(qps);
  per = std::max(kMinStripeBytes, (per + 4095) & ~size_t{4095});
  const int stripes = stripeCount(bytes, static_cast<uint32_t>(per));
  if (stripes <= 1) return plan;
  plan.stripeBytes = static_cast<uint32_t>(per);
  plan.stripes = stripes;
  return plan;
}

int stripeCount(size_t bytes, uint32_t stripeBytes) {
  if (stripeBytes == 0 || bytes == 0) return 1;
  return static_cast<int>((bytes + stripeBytes - 1) / stripeBytes);
}

size_t creditHead(size_t messageBytes, size_t creditBytes) {
  return messageBytes <= creditBytes ? messageBytes : 0;
}

size_t creditBytesFor(const Config& config, int peers) {
  if (config.ibCreditBytes != 0) {
    return std::clamp(config.ibCreditBytes, IbConnector::kMinCreditBytes,
                      IbConnector::kMaxCreditBytes);
  }
  size_t bytes = IbConnector::kDefaultCreditBytes;
  // Every peer's link pins its credits: past kCreditBudgetBytes in all, smaller credits.
  const size_t buffers =
      static_cast<size_t>(std::max(1, peers)) * static_cast<size_t>(std::max(1, config.ibCredits));
  bytes = std::min(bytes, IbConnector::kCreditBudgetBytes / buffers / 4096 * 4096);
  return std::clamp(bytes, IbConnector::kMinCreditBytes, IbConnector::kMaxCreditBytes);
}

Result<std::unique_ptr<IbConnector>> IbConnector::create(int rank, int peer, uint32_t index,
                                                         IbDevice* dev, RegCache* cache,
                                                         int credits, size_t creditBytes, int qps,
                                                         int ackTimeout) {
  if (qps < 1 || qps > kMaxQps) {
    return invalidArgument("ib transport: " + std::to_string(qps) +
                           " queue pairs per peer (BRAID_IB_QPS_PER_PEER takes 1 to " +
                           std::to_string(kMaxQps) + ")");
  }
  if (ackTimeout < Config::kMinIbTimeout || ackTimeout > Config::kMaxIbTimeout) {
    return invalidArgument("ib transport: ACK timeout exponent " + std::to_string(ackTimeout) +
                           " (BRAID_IB_TIMEOUT takes " + std::to_string(Config::kMinIbTimeout) +
                           " to " + std::to_string(Config::kMaxIbTimeout) + ")");
  }
  std::unique_ptr<IbConnector> c(
      new IbConnector(rank, peer, index, dev, cache, std::clamp(credits, 0, kMaxCredits),
                      std::clamp(creditBytes, kMinCreditBytes, kMaxCreditBytes), ackTimeout));
  BRAID_RETURN_IF_ERROR(c->init(qps));
  return c;
}

Status IbConnector::init(int qps) {
  const VerbsApi& api = dev_->api();
  blockBytes_ = kRecvDepth * kSlotBytes + 2 * kStageSlots * kStageBytes + credits_ * creditBytes_;
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
  std::random_device random;
  for (int q = 0; q < qps; ++q) {
    ibv_qp* qp = api.createQp(dev_->pd(), &qa);
    if (qp == nullptr) {
      return verbsError(
          "ibv_create_qp (queue pair " + std::to_string(q) + " of " + std::to_string(qps) + ")",
          errno);
    }
    qp_.push_back(qp);
    psn_.push_back(random() & 0xffffff);
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = dev_->port().port;
    attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    if (int e = api.modifyQp(
            qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
      return verbsError("ibv_modify_qp to INIT", e);
    }
    for (int s = 0; s < kRecvDepth; ++s) BRAID_RETURN_IF_ERROR(postRecvSlot(q, s));
  }
  return Status::ok();
}

IbConnector::~IbConnector() {
  // What each MiB cost on this link (BRAID_DEBUG=TRACE): clear-to-send round trips this
  // side waited on, work requests, and how many writes were in flight at most.
  const Stats& st = stats_;
  BRAID_TRACE(
      "ib: rank %d to rank %d: %llu writes (%llu into credits), %.1f MiB, %llu clear-to-sends "
      "and %llu credits sent, %llu send and %llu receive completions, at most %d writes in "
      "flight; credit %zu bytes; %d queue pairs, %llu pieces striped",
      rank_, peer_, static_cast<unsigned long long>(st.writes),
      static_cast<unsigned long long>(st.creditWrites), st.writeBytes / 1048576.0,
      static_cast<unsigned long long>(st.ctsSent),
      static_cast<unsigned long long>(st.creditsGranted),
      static_cast<unsigned long long>(st.sendCompletions),
      static_cast<unsigned long long>(st.recvCompletions), st.maxWritesInFlight, creditBytes_,
      qps(), static_cast<unsigned long long>(st.stripedCts));
  const VerbsApi& api = dev_->api();
  for (ibv_qp* qp : qp_) api.destroyQp(qp);
  for (SendMessage& m : sends_) {
    if (m.registered) cache_->release(m.mr);
  }
  for (RecvMessage& m : recvs_) {
    if (m.registered) cache_->release(m.mr);
  }
  if (blockMr_ != nullptr) api.deregMr(blockMr_);
  std::free(block_);
}

std::vector<QpInfo> IbConnector::localInfo() const {
  std::vector<QpInfo> infos(qp_.size());
  for (size_t q = 0; q < qp_.size(); ++q) {
    QpInfo& info = infos[q];
    info.qpn = qp_[q]->qp_num;
    info.psn = psn_[q];
    info.gid = dev_->port().gid;
    info.lid = dev_->port().lid;
    info.mtu = static_cast<uint8_t>(dev_->port().mtu);
    info.ethernet = dev_->port().ethernet ? 1 : 0;
  }
  return infos;
}

Status IbConnector::connect(const std::vector<QpInfo>& remote) {
  if (remote.size() != qp_.size()) {
    return internalError("ib transport: " + std::to_string(remote.size()) +
                         " queue pairs from rank " + std::to_string(peer_) + " for " +
                         std::to_string(qp_.size()) + " here");
  }
  for (size_t q = 0; q < qp_.size(); ++q)
    BRAID_RETURN_IF_ERROR(connectQp(qp_[q], psn_[q], remote[q]));
  return Status::ok();
}

Status IbConnector::connectQp(ibv_qp* qp, uint32_t psn, const QpInfo& remote) {
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
  if (int e = api.modifyQp(qp, &attr,
                           IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                               IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
    return verbsError("ibv_modify_qp to RTR (is rank " + std::to_string(peer_) +
                          "'s GID reachable from " + dev_->describe() + "?)",
                      e);
  }
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_RTS;
  // How long a packet waits for its ACK before it is sent again: 4.096 us * 2^ackTimeout_
  // (BRAID_IB_TIMEOUT; 18 by default, about 1.07 s, as UCX and NCCL use). Where ACKs can
  // come later than a short timeout (a loaded host; soft-RoCE, whose packet work runs on
  // the ranks' own CPUs), the queue pair sends again what was only late, and the copies
  // cost the link as much as new data (perf/RESULTS.md). A dead peer process is reported
  // at once by the side connection (peer_link.h); the retries only catch a peer that went
  // silent without closing it.
  attr.timeout = static_cast<uint8_t>(ackTimeout_);
  attr.retry_cnt = 7;  // a silent peer fails after 8 tries (about 9 s at the default)
  attr.rnr_retry = 7;  // never expected (receives cover every send), but not fatal
  attr.sq_psn = psn;
  attr.max_rd_atomic = 1;
  if (int e = api.modifyQp(qp, &attr,
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

Status IbConnector::postRecvSlot(int qp, int slot) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(block_ + slot * kSlotBytes);
  sge.length = kSlotBytes;
  sge.lkey = blockMr_->lkey;
  ibv_recv_wr wr{};
  wr.wr_id = wrId(index_, qp, kRecvFlag | static_cast<uint64_t>(slot));
  // Queue pairs past 0 receive only immediates: no buffer (a SEND there fails the link).
  wr.sg_list = qp == 0 ? &sge : nullptr;
  wr.num_sge = qp == 0 ? 1 : 0;
  ibv_recv_wr* bad = nullptr;
  if (int e = ibv_post_recv(qp_[qp], &wr, &bad)) return verbsError("ibv_post_recv", e);
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

uint8_t* IbConnector::creditBuffer(int i) const {
  return block_ + kRecvDepth * kSlotBytes + 2 * kStageSlots * kStageBytes + i * creditBytes_;
}

bool IbConnector::postCts(const ClearToSend& cts) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(&cts);
  sge.length = sizeof cts;
  ibv_send_wr wr{};
  wr.wr_id = wrId(index_, 0, 0);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  const bool signaled = unsignaledRun_ >= kMaxUnsignaled;
  wr.send_flags = IBV_SEND_INLINE | (signaled ? IBV_SEND_SIGNALED : 0);
  ibv_send_wr* bad = nullptr;
  if (int e = ibv_post_send(qp_[0], &wr, &bad)) {
    fail(verbsError("ibv_post_send of a clear-to-send", e));
    return false;
  }
  inFlight_[0].push_back(InFlight{false, cts.seq, 0, -1, signaled});
  unsignaledRun_ = signaled ? 0 : unsignaledRun_ + 1;
  if (cts.credit) {
    ++stats_.creditsGranted;
  } else if (cts.id != kNoAnswer) {
    ++stats_.ctsSent;
  }
  return true;
}

void IbConnector::sendMismatch(uint64_t seq, size_t bytes) {
  if (static_cast<int>(inFlight_[0].size()) >= kSendDepth) return;  // the peer times out instead
  ClearToSend cts{};
  cts.seq = seq;
  cts.msgBytes = bytes;
  cts.offset = bytes;
  cts.id = kNoAnswer;
  (void)postCts(cts);
}

void IbConnector::consumeCredit(RecvMessage& m) {
  Credit& c = credit_[m.credit];
  if (c.state != Credit::kLanded) return;
  const size_t head = creditHead(m.bytes, creditBytes_);
  if (c.written != head || (c.complete != (m.bytes <= creditBytes_))) {
    // The sender's message is c.written bytes (complete) or more than creditBytes_.
    const std::string theirs = c.complete ? std::to_string(c.written) + " bytes"
                                          : "more than " + std::to_string(creditBytes_) + " bytes";
    // The sender rejects this notice, whether it still waits for the rest or finished.
    sendMismatch(m.seq, m.bytes);
    fail(Status(braidInvalidUsage,
                "ib transport: rank " + std::to_string(peer_) + " sends a message of " + theirs +
                    " to rank " + std::to_string(rank_) + ", which expects " +
                    std::to_string(m.bytes) + " bytes (mismatched calls?)",
                peer_));
    return;
  }
  if (head > 0) {
    const uint8_t* from = creditBuffer(m.credit);
    const RecvSink& s = m.sink;
    if (s.reduce != nullptr) {
      s.reduce(s.dst, s.accum, from, head / s.elemSize);
    } else {
      std::memcpy(s.dst, from, head);
    }
  }
  c = Credit{};
  m.credit = -1;
  m.landed += head;
  m.req->completed = m.landed;
  checkRecvDone(m);
}

void IbConnector::checkRecvDone(RecvMessage& m) {
  if (m.landed == m.bytes && m.requested == m.bytes && m.credit < 0) m.done = true;
}

void IbConnector::pumpRecvs(bool* progressed) {
  for (RecvMessage& m : recvs_) {
    if (m.ctsIssued && m.requested == m.bytes) continue;  // fully asked for
    if (!m.modeChosen) {
      m.modeChosen = true;
      for (int i = 0; i < credits_; ++i) {
        if (credit_[i].state != Credit::kFree && credit_[i].seq == m.seq) m.credit = i;
      }
      if (m.credit >= 0) {
        // Its head comes (or came) through the credit; clear-to-sends ask for the rest.
        m.requested = creditHead(m.bytes, creditBytes_);
        m.ctsIssued = true;
        consumeCredit(m);
        if (!error_.isOk()) return;
      }
      if (m.bytes > m.requested && m.sink.reduce == nullptr) {
        Result<RegCache::Handle> h = cache_->acquire(m.sink.dst, m.bytes);
        if (h.isOk()) {
          m.mr = *h;
          m.registered = true;
        }
      }
      m.staged = m.bytes > m.requested && !m.registered;
    }
    while (!(m.ctsIssued && m.requested == m.bytes)) {
      if (ctsOutUsed_ >= kMaxCtsOut || static_cast<int>(inFlight_[0].size()) >= kSendDepth) {
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
      const StripePlan plan = stripePlan(piece, qps());
      cts.stripeBytes = plan.stripeBytes;
      int id = 0;
      while (ctsOut_[id].used) ++id;
      cts.id = static_cast<uint16_t>(id);
      if (!postCts(cts)) return;
      ctsOut_[id] = CtsOut{true, m.seq, m.requested, piece, slot, plan.stripes, 0};
      ++ctsOutUsed_;
      if (slot >= 0) recvStageBusy_[slot] = true;
      m.requested += piece;
      m.ctsIssued = true;
      *progressed = true;
    }
  }
  grantCredits(progressed);
}

void IbConnector::grantCredits(bool* progressed) {
  // Only for messages no receive is posted for: a posted one asks for itself.
  grantSeq_ = std::max(grantSeq_, nextRecvSeq_);
  for (int i = 0; i < credits_; ++i) {
    if (credit_[i].state != Credit::kFree) continue;
    if (static_cast<int>(inFlight_[0].size()) >= kSendDepth) return;
    ClearToSend cts{};
    cts.seq = grantSeq_;
    cts.addr = reinterpret_cast<uintptr_t>(creditBuffer(i));
    cts.rkey = blockMr_->rkey;
    cts.bytes = static_cast<uint32_t>(creditBytes_);
    cts.id = static_cast<uint16_t>(kMaxCtsOut + i);
    cts.credit = 1;
    if (!postCts(cts)) return;
    credit_[i] = Credit{Credit::kGranted, grantSeq_, 0, false};
    ++grantSeq_;
    *progressed = true;
  }
}

void IbConnector::pumpSends(bool* progressed) {
  auto it = ctsIn_.begin();
  while (it != ctsIn_.end()) {
    const ClearToSend& cts = it->cts;
    SendMessage* m = sendBySeq(cts.seq);
    if (m == nullptr && cts.seq >= nextSendSeq_) {
      ++it;  // the receiver is ahead: this send is not posted yet
      continue;
    }
    const bool finished =
        m == nullptr || (m->served == m->bytes && m->served > 0) || (m->bytes == 0 && m->done);
    if (!cts.credit && (m == nullptr || cts.msgBytes != m->bytes || finished)) {
      // Tell the receiver (a 0-byte write with the mismatch immediate), then fail here.
      if (cts.id != kNoAnswer && static_cast<int>(inFlight_[0].size()) < kSendDepth) {
        ibv_send_wr wr{};
        wr.wr_id = wrId(index_, 0, 0);
        wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.imm_data = htonl(cts.id | kImmMismatch);
        wr.wr.rdma.remote_addr = cts.addr;
        wr.wr.rdma.rkey = cts.rkey;
        ibv_send_wr* bad = nullptr;
        if (ibv_post_send(qp_[0], &wr, &bad) == 0) {
          inFlight_[0].push_back(InFlight{true, kNoMessage, 0, -1, true});
          unsignaledRun_ = 0;
          ++writesInFlight_;
        }
      }
      const std::string mine =
          m != nullptr ? std::to_string(m->bytes) + " bytes" : "a message of another size";
      fail(Status(braidInvalidUsage,
                  "ib transport: rank " + std::to_string(peer_) + " expects a message of " +
                      std::to_string(cts.msgBytes) + " bytes from rank " + std::to_string(rank_) +
                      ", which sends " + mine + " (mismatched calls?)",
                  peer_));
      return;
    }
    if (cts.credit && (m == nullptr || (it->served == 0 && m->served > 0))) {
      // A credit comes before anything else for its message, which cannot have finished
      // (a credit larger than a send staging slot goes in several writes).
      fail(remoteError("ib transport: rank " + std::to_string(peer_) +
                           " granted a credit for a message already sent (protocol error)",
                       peer_));
      return;
    }
    if (!cts.credit && stripeCount(cts.bytes, cts.stripeBytes) > qps()) {
      fail(remoteError("ib transport: rank " + std::to_string(peer_) + " asks for " +
                           std::to_string(stripeCount(cts.bytes, cts.stripeBytes)) +
                           " stripes over " + std::to_string(qps()) +
                           " queue pairs (protocol error; is BRAID_IB_QPS_PER_PEER the same on "
                           "every rank?)",
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
    if (!serveCts(*it, *m, progressed)) return;  // queues or staging full, or failed
    it = ctsIn_.erase(it);
  }
}

bool IbConnector::serveCts(CtsIn& in, SendMessage& m, bool* progressed) {
  const ClearToSend& cts = in.cts;
  // A credit asks for the head, whatever the message's size; a clear-to-send for a range.
  const size_t ctsBytes = cts.credit ? creditHead(m.bytes, cts.bytes) : cts.bytes;
  const int stripes = cts.credit ? 1 : stripeCount(ctsBytes, cts.stripeBytes);
  const size_t per = stripes > 1 ? cts.stripeBytes : ctsBytes;
  int left = 0;
  for (int s = 0; s < stripes; ++s) left += in.stripeDone[s] ? 0 : 1;
  // Stripes in order, each to its end before the next: the last write posted is the
  // last of the range.
  for (int s = 0; s < stripes; ++s) {
    const size_t begin = static_cast<size_t>(s) * per;
    const size_t len = std::min(per, ctsBytes - begin);
    while (!in.stripeDone[s]) {
      if (static_cast<int>(inFlight_[s].size()) >= kSendDepth) return false;
      size_t piece = std::min(len - in.stripeServed[s], kWriteBytes);
      const size_t within = begin + in.stripeServed[s];  // from the range's start
      const size_t at = cts.offset + within;             // in the message
      ibv_sge sge{};
      int slot = -1;
      if (piece > 0 && m.staged) {
        for (int k = 0; k < kStageSlots && slot < 0; ++k) {
          if (!sendStageBusy_[k]) slot = k;
        }
        if (slot < 0) return false;
        piece = std::min(piece, kStageBytes);
        uint8_t* stage = block_ + kRecvDepth * kSlotBytes + (kStageSlots + slot) * kStageBytes;
        std::memcpy(stage, m.src + at, piece);
        sge.addr = reinterpret_cast<uintptr_t>(stage);
        sge.lkey = blockMr_->lkey;
      } else if (piece > 0) {
        sge.addr = reinterpret_cast<uintptr_t>(m.src + at);
        sge.lkey = m.mr.mr->lkey;
      }
      sge.length = static_cast<uint32_t>(piece);
      const bool lastOfStripe = in.stripeServed[s] + piece == len;
      const bool lastOfCts = lastOfStripe && left == 1;
      const bool lastOfMessage = lastOfCts && cts.offset + ctsBytes == m.bytes;
      uint32_t imm = cts.id;
      if (cts.credit) {
        imm |= static_cast<uint32_t>(ctsBytes) << kImmBytesShift;
        if (lastOfMessage) imm |= kImmComplete;
      }
      ibv_send_wr wr{};
      wr.wr_id = wrId(index_, s, 0);
      wr.sg_list = piece > 0 ? &sge : nullptr;
      wr.num_sge = piece > 0 ? 1 : 0;
      wr.opcode = lastOfStripe ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
      wr.send_flags = IBV_SEND_SIGNALED;
      wr.imm_data = htonl(imm);
      wr.wr.rdma.remote_addr = cts.addr + within;
      wr.wr.rdma.rkey = cts.rkey;
      ibv_send_wr* bad = nullptr;
      if (int e = ibv_post_send(qp_[s], &wr, &bad)) {
        fail(
            verbsError("ibv_post_send of an RDMA write (queue pair " + std::to_string(s) + ")", e));
        return false;
      }
      if (slot >= 0) sendStageBusy_[slot] = true;
      inFlight_[s].push_back(InFlight{true, m.seq, piece, slot, true});
      if (s == 0) unsignaledRun_ = 0;
      ++m.writesOut;
      if (lastOfMessage) m.allPosted = true;
      ++stats_.writes;
      stats_.writeBytes += piece;
      stats_.qpWriteBytes[s] += piece;
      if (cts.credit) {
        ++stats_.creditWrites;
        stats_.creditWriteBytes += piece;
      }
      stats_.maxWritesInFlight = std::max(stats_.maxWritesInFlight, ++writesInFlight_);
      m.served += piece;
      in.served += piece;
      in.stripeServed[s] += piece;
      *progressed = true;
      if (lastOfStripe) {
        in.stripeDone[s] = true;
        --left;
      }
    }
  }
  if (stripes > 1) ++stats_.stripedCts;
  return true;
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
  const int qp = static_cast<int>((wc.wr_id >> kQpShift) & 0x7fff);
  if (qp >= qps()) {
    fail(internalError("ib transport: a completion for queue pair " + std::to_string(qp) + " of " +
                       std::to_string(qps())));
    return;
  }
  if ((wc.wr_id & kRecvFlag) != 0) {
    ++stats_.recvCompletions;
    const int slot = static_cast<int>(wc.wr_id & 0xffff);
    if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
      onWriteLanded(ntohl(wc.imm_data));
    } else if (qp == 0) {
      CtsIn in{};
      std::memcpy(&in.cts, block_ + slot * kSlotBytes, sizeof in.cts);
      ctsIn_.push_back(in);
    } else {
      fail(remoteError("ib transport: rank " + std::to_string(peer_) +
                           " sent a message on a striping queue pair (protocol error)",
                       peer_));
    }
    if (error_.isOk()) fail(postRecvSlot(qp, slot));
    return;
  }
  onSendCompleted(qp);
}

void IbConnector::onWriteLanded(uint32_t imm) {
  const int id = static_cast<int>(imm & kImmIdMask);
  if (id >= kMaxCtsOut + credits_ || (id < kMaxCtsOut && !ctsOut_[id].used) ||
      (id >= kMaxCtsOut && credit_[id - kMaxCtsOut].state != Credit::kGranted)) {
    fail(remoteError("ib transport: rank " + std::to_string(peer_) +
                         " wrote data this rank never asked for (protocol error)",
                     peer_));
    return;
  }
  if (id >= kMaxCtsOut) {
    Credit& c = credit_[id - kMaxCtsOut];
    c.state = Credit::kLanded;
    c.written = imm >> kImmBytesShift;
    c.complete = (imm & kImmComplete) != 0;
    RecvMessage* m = recvBySeq(c.seq);
    if (m != nullptr && m->modeChosen) consumeCredit(*m);
    return;
  }
  // A striped piece is whole once every stripe's immediate arrived, in whatever order.
  if ((imm & kImmMismatch) == 0 && ++ctsOut_[id].landed < ctsOut_[id].stripes) return;
  const CtsOut c = ctsOut_[id];
  ctsOut_[id].used = false;
  --ctsOutUsed_;
  RecvMessage* m = recvBySeq(c.seq);
  if ((imm & kImmMismatch) != 0) {
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
  checkRecvDone(*m);
}

void IbConnector::onSendCompleted(int qp) {
  std::deque<InFlight>& queue = inFlight_[qp];
  if (queue.empty()) {
    fail(internalError("ib transport: a send completion nothing was waiting for"));
    return;
  }
  // The unsignaled entries before this completion's are done too.
  while (!queue.front().signaled) {
    queue.pop_front();
    if (queue.empty()) {
      fail(internalError("ib transport: a send completion nothing signaled was waiting for"));
      return;
    }
  }
  const InFlight f = queue.front();
  queue.pop_front();
  ++stats_.sendCompletions;
  if (!f.isWrite) return;  // a clear-to-send went out
  --writesInFlight_;
  if (f.stageSlot >= 0) sendStageBusy_[f.stageSlot] = false;
  if (f.seq == kNoMessage) return;  // a mismatch notice
  SendMessage* m = sendBySeq(f.seq);
  if (m == nullptr) return;
  m->acked += f.bytes;
  m->req->completed = m->acked;
  // Queue pairs complete in no common order: the message is sent once all its writes are.
  if (--m->writesOut == 0 && m->allPosted) m->done = true;
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
