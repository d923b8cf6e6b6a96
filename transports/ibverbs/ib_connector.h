// The ib transport's link to one peer: reliable-connected queue pairs (one, or several
// that a large message is striped over) and a receiver-driven protocol (see
// ib_connector.cc).
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "core/config.h"
#include "transports/connector.h"
#include "transports/ibverbs/ib_device.h"
#include "transports/ibverbs/reg_cache.h"

namespace braid::transport::ib {

/// The receiver's request for data, sent as a small SEND: "write bytes [offset,
/// offset + bytes) of your message `seq` to addr/rkey". The sender checks
/// msgBytes against its message: a mismatch fails on both sides. A credit
/// (granted ahead, before the receiver knows the message) instead says "write
/// the first min(bytes, your size) bytes of message `seq` to addr/rkey"; it
/// carries no size. `id` comes back in the immediate that answers it: once per stripe
/// when stripeBytes splits the range over several queue pairs (stripePlan()).
struct ClearToSend {
  uint64_t seq;
  uint64_t msgBytes;  // unused in a credit
  uint64_t offset;    // 0 in a credit
  uint64_t addr;
  uint32_t rkey;
  uint32_t bytes;
  uint16_t id;
  uint16_t credit;       // 1: a credit
  uint32_t stripeBytes;  // 0: one piece on queue pair 0; else stripe i on queue pair i
};

/// What a rank publishes (over the bootstrap) for each of its queue pairs.
struct QpInfo {
  uint32_t qpn = 0;
  uint32_t psn = 0;
  ibv_gid gid{};
  uint16_t lid = 0;
  uint8_t mtu = 0;       // ibv_mtu
  uint8_t ethernet = 0;  // RoCE: address by GID
};

/// How a clear-to-send's range of `bytes` is split over `qps` queue pairs: stripes of
/// `stripeBytes` (the last one shorter), stripe i written on queue pair i. One stripe
/// (stripeBytes 0) below 2 * kMinStripeBytes: a write per queue pair costs more than
/// the parallelism gains on a small piece.
struct StripePlan {
  uint32_t stripeBytes = 0;  // 0: one stripe, on queue pair 0
  int stripes = 1;
};
constexpr size_t kMinStripeBytes = 4096;
StripePlan stripePlan(size_t bytes, int qps);
/// The stripes a clear-to-send's range of `bytes` with `stripeBytes` has (the sender's side
/// of stripePlan()).
int stripeCount(size_t bytes, uint32_t stripeBytes);

class IbConnector final : public Connector {
 public:
  static constexpr int kSendDepth = 128;     // signaled work requests in flight
  static constexpr int kMaxCtsOut = 16;      // clear-to-sends issued and not yet written
  static constexpr int kMaxUnsignaled = 15;  // clear-to-sends in a row without a completion
  /// Credits: clear-to-sends granted ahead for the next messages this rank has not posted
  /// a receive for yet, each for a whole message of at most creditBytes into a buffer of
  /// its own. The sender writes such a message at once instead of waiting for a
  /// clear-to-send round trip; a larger one answers the credit with an empty write and goes
  /// straight into the receiver's buffer once the receive asks for it (creditHead), sparing
  /// the receiver a copy of every byte. BRAID_IB_CREDITS of them (Config::ibCredits), at
  /// most kMaxCredits, of BRAID_IB_CREDIT_BYTES each (kMinCreditBytes..kMaxCreditBytes).
  static constexpr int kMaxCredits = 8;
  static constexpr size_t kMinCreditBytes = Config::kMinIbCreditBytes;
  static constexpr size_t kMaxCreditBytes = Config::kMaxIbCreditBytes;  // bounded by the immediate
  /// Small enough that copying a message out of a credit costs less than the round trip it
  /// saves; larger messages go zero-copy.
  static constexpr size_t kDefaultCreditBytes = 64 << 10;
  /// What the credits of all of a rank's links may pin together, unless
  /// BRAID_IB_CREDIT_BYTES sets their size (creditBytesFor).
  static constexpr size_t kCreditBudgetBytes = size_t{256} << 20;
  static constexpr int kRecvDepth = 2 * (kMaxCtsOut + kMaxCredits) + 8;
  static constexpr int kStageSlots = 4;  // per direction
  static constexpr size_t kStageBytes = 256 << 10;
  static constexpr size_t kWriteBytes = 1 << 20;   // the largest single RDMA write
  static constexpr size_t kMaxCtsBytes = 1 << 30;  // the largest piece one clear-to-send asks
  static constexpr int kMaxQps = Config::kMaxIbQpsPerPeer;

  /// Creates the queue pairs (INIT, receives posted). `index`: this connector's number in
  /// the transport, carried in work request ids. `dev` and `cache` outlive the connector.
  /// `credits`: 0..kMaxCredits granted ahead to the peer, each of `creditBytes` (clamped to
  /// kMinCreditBytes..kMaxCreditBytes). `qps`: queue pairs to the peer, 1..kMaxQps (both
  /// sides must open as many). `ackTimeout`: the queue pairs' local ACK timeout exponent,
  /// 1..31 (BRAID_IB_TIMEOUT).
  static Result<std::unique_ptr<IbConnector>> create(int rank, int peer, uint32_t index,
                                                     IbDevice* dev, RegCache* cache, int credits,
                                                     size_t creditBytes = kDefaultCreditBytes,
                                                     int qps = 1,
                                                     int ackTimeout = Config::kDefaultIbTimeout);
  ~IbConnector() override;

  int qps() const { return static_cast<int>(qp_.size()); }
  /// This side's connection data for the peer, one per queue pair.
  std::vector<QpInfo> localInfo() const;
  /// INIT -> RTR -> RTS, queue pair i towards the peer's queue pair i; `remote` has one
  /// entry per queue pair.
  Status connect(const std::vector<QpInfo>& remote);

  int peer() const override { return peer_; }
  Status postSend(const void* src, size_t bytes, Request* req) override;
  Status postRecv(const RecvSink& sink, size_t bytes, Request* req) override;
  /// Drains the shared completion queue (for every connector: `dispatch` routes each
  /// completion), then issues what this link can.
  Status progress(bool* progressed) override;

  /// One completion of this connector's queue pair (called by the transport's poll).
  void complete(const ibv_wc& wc);
  /// Issues clear-to-sends and writes while the queues have room. Sets *progressed.
  void pump(bool* progressed);
  /// The sticky error, if any.
  const Status& error() const { return error_; }
  /// Records `status` as the sticky error (the first one wins).
  void fail(Status status);
  /// True while a posted send or receive is not complete.
  bool busy() const { return !sends_.empty() || !recvs_.empty(); }
  size_t creditBytes() const { return creditBytes_; }

  /// What the link has done so far (logged when the connector closes; tests read it):
  /// the work each message costs, against ib_write_bw's one large write per message.
  struct Stats {
    uint64_t ctsSent = 0;         // clear-to-sends this side issued (round trips it waited on)
    uint64_t creditsGranted = 0;  // credits this side granted
    uint64_t writes = 0;          // RDMA writes this side posted
    uint64_t writeBytes = 0;
    uint64_t creditWrites = 0;  // of them, into a credit the peer granted
    uint64_t creditWriteBytes = 0;
    uint64_t sendCompletions = 0;
    uint64_t recvCompletions = 0;
    int maxWritesInFlight = 0;  // the most writes posted and not yet complete at once
    uint64_t stripedCts = 0;    // clear-to-sends this side served over several queue pairs
    uint64_t qpWriteBytes[Config::kMaxIbQpsPerPeer] = {};  // bytes written on each queue pair
  };
  const Stats& stats() const { return stats_; }
  /// Set by the transport: drains the completion queue into complete() of each connector.
  using PollFn = Status (*)(void* transport, bool* progressed);
  void setPoller(PollFn fn, void* transport) {
    pollFn_ = fn;
    pollArg_ = transport;
  }

 private:
  IbConnector(int rank, int peer, uint32_t index, IbDevice* dev, RegCache* cache, int credits,
              size_t creditBytes, int ackTimeout)
      : rank_(rank),
        peer_(peer),
        index_(index),
        credits_(credits),
        creditBytes_(creditBytes),
        ackTimeout_(ackTimeout),
        dev_(dev),
        cache_(cache) {}

  struct SendMessage {
    const uint8_t* src;
    size_t bytes;
    Request* req;
    uint64_t seq;
    RegCache::Handle mr;
    bool registered = false;  // mr valid
    bool staged = false;      // unregistrable: copied through send staging
    size_t served = 0;        // bytes whose writes are posted
    size_t acked = 0;         // bytes whose writes completed
    int writesOut = 0;        // writes posted and not complete (on any queue pair)
    bool allPosted = false;   // its last write is posted: done once writesOut is 0
    bool done = false;
  };
  struct RecvMessage {
    RecvSink sink;
    size_t bytes;
    Request* req;
    uint64_t seq;
    RegCache::Handle mr;
    bool registered = false;
    bool staged = false;  // lands in receive staging (reductions, unregistrable memory)
    bool modeChosen = false;
    size_t requested = 0;    // bytes covered by clear-to-sends (and a credit) issued
    bool ctsIssued = false;  // at least one (a 0-byte message needs exactly one)
    int credit = -1;         // the credit holding its head, until copied out
    size_t landed = 0;
    bool done = false;
  };
  // Send queue entries of one queue pair, in posting order (its completions come in
  // order; those of different queue pairs do not).
  struct InFlight {
    bool isWrite;   // else a clear-to-send
    uint64_t seq;   // the message a write belongs to (kNoMessage: a mismatch notice)
    size_t bytes;   // write payload
    int stageSlot;  // send staging slot it read from, -1 none
    bool signaled;  // completes on its own; else with the next signaled entry
  };
  struct CtsOut {
    bool used = false;
    uint64_t seq = 0;
    size_t offset = 0;
    size_t bytes = 0;
    int stageSlot = -1;  // receive staging slot, -1: straight into the user's buffer
    int stripes = 1;     // immediates that answer it, one per stripe
    int landed = 0;      // of them, arrived
  };
  // A credit's life: granted for message `seq`, landed (written, its size known), then
  // copied out into the receive once that is posted, and free again.
  struct Credit {
    enum State : uint8_t { kFree, kGranted, kLanded } state = kFree;
    uint64_t seq = 0;
    size_t written = 0;
    bool complete = false;  // the sender's message ended within it
  };
  struct CtsIn {
    ClearToSend cts;
    size_t served = 0;  // bytes whose writes are posted, over all stripes
    int stripes = 1;
    size_t stripeServed[kMaxQps] = {};  // per stripe
    bool stripeDone[kMaxQps] = {};      // its write with the immediate is posted
  };

  Status init(int qps);
  Status connectQp(ibv_qp* qp, uint32_t psn, const QpInfo& remote);
  Status postRecvSlot(int qp, int slot);
  /// Posts the writes of `in` that the queue pairs have room for; false when it must wait
  /// (or failed). Sets *progressed.
  bool serveCts(CtsIn& in, SendMessage& m, bool* progressed);
  void pumpRecvs(bool* progressed);
  void pumpSends(bool* progressed);
  void grantCredits(bool* progressed);
  /// Posts a clear-to-send (or credit); false after failing.
  bool postCts(const ClearToSend& cts);
  /// Checks a landed credit against receive `m` and moves its bytes into it.
  void consumeCredit(RecvMessage& m);
  /// Tells the sender its message `seq` does not have `bytes` bytes (it fails there too).
  void sendMismatch(uint64_t seq, size_t bytes);
  uint8_t* creditBuffer(int i) const;
  void checkRecvDone(RecvMessage& m);
  SendMessage* sendBySeq(uint64_t seq);
  RecvMessage* recvBySeq(uint64_t seq);
  void onWriteLanded(uint32_t imm);
  void onSendCompleted(int qp);
  void retire();
  Status verbsError(const std::string& what, int err) const;

  const int rank_;
  const int peer_;
  const uint32_t index_;
  const int credits_;
  const size_t creditBytes_;
  const int ackTimeout_;   // ibv_qp_attr::timeout: 4.096 us * 2^ackTimeout_ per try
  IbDevice* const dev_;    // the transport's; outlives connectors
  RegCache* const cache_;  // the transport's; outlives connectors
  PollFn pollFn_ = nullptr;
  void* pollArg_ = nullptr;
  std::vector<ibv_qp*> qp_;  // queue pair 0 carries everything but stripes 1..
  std::vector<uint32_t> psn_;
  // One page-aligned block: receive slots for clear-to-sends, then staging (receive, send).
  uint8_t* block_ = nullptr;
  size_t blockBytes_ = 0;
  ibv_mr* blockMr_ = nullptr;
  bool recvStageBusy_[kStageSlots] = {};
  bool sendStageBusy_[kStageSlots] = {};

  std::deque<SendMessage> sends_;
  std::deque<RecvMessage> recvs_;
  uint64_t nextSendSeq_ = 0, nextRecvSeq_ = 0;
  uint64_t grantSeq_ = 0;    // the next message a credit may be granted for
  std::deque<CtsIn> ctsIn_;  // from the peer, not yet fully written
  // Clear-to-sends issued and not yet answered, by id (answers may come out of order:
  // the sender serves a credit only once it has posted that message).
  CtsOut ctsOut_[kMaxCtsOut];
  int ctsOutUsed_ = 0;
  Credit credit_[kMaxCredits];              // the first credits_; id kMaxCtsOut + i
  std::deque<InFlight> inFlight_[kMaxQps];  // per queue pair
  int writesInFlight_ = 0;
  int unsignaledRun_ = 0;  // unsignaled entries posted (on queue pair 0) since a signaled one
  Stats stats_;
  Status error_;
};

/// The bytes of a message of `messageBytes` its sender writes into a credit of
/// `creditBytes`: all of it when it fits, else none (the whole message waits for a
/// clear-to-send and goes straight into the receiver's buffer).
size_t creditHead(size_t messageBytes, size_t creditBytes);

/// The bytes each credit covers, on a rank with `peers` ib links: BRAID_IB_CREDIT_BYTES,
/// else kDefaultCreditBytes, but no more than keeps every link's credits within
/// kCreditBudgetBytes; always within kMinCreditBytes..kMaxCreditBytes.
size_t creditBytesFor(const Config& config, int peers);

}  // namespace braid::transport::ib
