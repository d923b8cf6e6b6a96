// The ib connector's protocol (transports/ibverbs/ib_connector.cc) between two
// connectors in one process, over a fake verbs device whose "wire" the test
// drives: work requests wait in each queue pair's send queue until deliver()
// carries them out in posting order (RC semantics: a SEND or a write with
// immediate consumes a posted receive of the peer, an RDMA write copies into
// memory the rkey must cover). Runs anywhere; the soft-RoCE guest runs the same
// protocol on real verbs (tests/rdma/ib_checks.cc).
//
// Checked against the bytes sent (the reference): messages either side of the
// credit size, received before and after they were sent, with and without
// credits, plain and reducing; a receive posted late (the sender has queued
// credits for later messages before the rest of the current one); size
// mismatches failing both connectors; a receiver that never posts leaving a
// large send unfinished (the engine's deadline then fails it) but not a small one.
// With several queue pairs per peer (striping): the same messages, the wire
// carrying one work request at a time from a randomly chosen queue pair and the
// completions of the queue pairs drained in random order; a receive or send
// that must wait for its last stripe; failed completions on any queue pair.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "transports/ibverbs/ib_connector.h"
#include "transports/ibverbs/ib_device.h"
#include "transports/ibverbs/reg_cache.h"

namespace braid::transport::ib {
namespace {

struct FakeQp {
  ibv_qp qp{};
  uint32_t peerQpn = 0;
  int ackTimeout = -1;  // ibv_qp_attr::timeout as moved to RTS; -1: never set
  int retryCount = -1;
  std::deque<ibv_recv_wr> recvs;  // posted receives (one sge each, copied)
  std::deque<ibv_sge> recvSges;
  struct Wr {
    ibv_send_wr wr;
    ibv_sge sge;
    std::vector<uint8_t> inlineData;
  };
  std::deque<Wr> sends;  // posted, not yet carried out
  std::deque<ibv_wc> completions;
};

// One fake device for both connectors; every verbs object is ours.
struct Fake {
  static inline ibv_context context{};
  static inline ibv_device device{};
  static inline ibv_device* list[1] = {&device};
  static inline ibv_pd pd{};
  static inline ibv_comp_channel channel{};
  static inline ibv_cq cq{};
  static inline std::map<uint32_t, std::unique_ptr<FakeQp>> qps;
  static inline std::map<uint32_t, ibv_mr*> mrs;  // by rkey
  static inline uint32_t nextKey = 1;
  static inline std::string wireError;
  // Memory regMr refuses (as a device refuses memory it cannot pin), any region touching
  // it: sends from it go through send staging.
  static inline const uint8_t* refuseBegin = nullptr;
  static inline const uint8_t* refuseEnd = nullptr;
  static inline uint32_t nextQpn = 100;
  // The queue pair whose work requests fail (retries exhausted, as when the peer died)
  // instead of being carried out; 0: none.
  static inline uint32_t failQpn = 0;

  static FakeQp* of(ibv_qp* qp) { return qps.at(qp->qp_num).get(); }

  static int postSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr**) {
    for (; wr != nullptr; wr = wr->next) {
      FakeQp::Wr w{*wr, {}, {}};
      if (wr->num_sge > 0) w.sge = wr->sg_list[0];
      if ((wr->send_flags & IBV_SEND_INLINE) != 0) {
        const auto* p = reinterpret_cast<const uint8_t*>(w.sge.addr);
        w.inlineData.assign(p, p + w.sge.length);
      }
      of(qp)->sends.push_back(std::move(w));
    }
    return 0;
  }
  static int postRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr**) {
    for (; wr != nullptr; wr = wr->next) {
      of(qp)->recvs.push_back(*wr);
      // No sge: a receive for immediates only, which takes no SEND's payload.
      of(qp)->recvSges.push_back(wr->num_sge > 0 ? wr->sg_list[0] : ibv_sge{});
    }
    return 0;
  }
  // Is [addr, addr + len) inside the region `rkey` registered?
  static bool covers(uint32_t rkey, uint64_t addr, size_t len) {
    auto it = mrs.find(rkey);
    if (it == mrs.end()) return false;
    const auto base = reinterpret_cast<uintptr_t>(it->second->addr);
    return addr >= base && addr + len <= base + it->second->length;
  }
  // Carries out up to `most` queued work requests of `qp`, in order. False on a wire error.
  static bool deliver(FakeQp* q, size_t most = SIZE_MAX) {
    FakeQp* peer = qps.at(q->peerQpn).get();
    for (; most > 0 && !q->sends.empty(); --most) {
      FakeQp::Wr w = std::move(q->sends.front());
      q->sends.pop_front();
      const ibv_send_wr& wr = w.wr;
      if (q->qp.qp_num == failQpn) {
        ibv_wc wc{};
        wc.wr_id = wr.wr_id;
        wc.status = IBV_WC_RETRY_EXC_ERR;
        q->completions.push_back(wc);
        continue;
      }
      const size_t len = wr.num_sge > 0 ? w.sge.length : 0;
      bool consumes = wr.opcode == IBV_WR_SEND || wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
      if (wr.opcode != IBV_WR_SEND && len > 0) {
        if (!covers(wr.wr.rdma.rkey, wr.wr.rdma.remote_addr, len)) {
          wireError = "an RDMA write outside the rkey's region";
          return false;
        }
        std::memcpy(reinterpret_cast<void*>(wr.wr.rdma.remote_addr),
                    reinterpret_cast<const void*>(w.sge.addr), len);
      }
      if (consumes) {
        if (peer->recvs.empty()) {
          wireError = "a send met an empty receive queue";
          return false;
        }
        ibv_recv_wr r = peer->recvs.front();
        ibv_sge s = peer->recvSges.front();
        peer->recvs.pop_front();
        peer->recvSges.pop_front();
        ibv_wc wc{};
        wc.wr_id = r.wr_id;
        wc.status = IBV_WC_SUCCESS;
        if (wr.opcode == IBV_WR_SEND) {
          if (w.inlineData.size() > s.length) {
            wireError = "a SEND longer than the receive";
            return false;
          }
          std::memcpy(reinterpret_cast<void*>(s.addr), w.inlineData.data(), w.inlineData.size());
          wc.opcode = IBV_WC_RECV;
          wc.byte_len = static_cast<uint32_t>(w.inlineData.size());
        } else {
          wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
          wc.imm_data = wr.imm_data;
          wc.wc_flags = IBV_WC_WITH_IMM;
        }
        peer->completions.push_back(wc);
      }
      if ((wr.send_flags & IBV_SEND_SIGNALED) != 0) {
        ibv_wc wc{};
        wc.wr_id = wr.wr_id;
        wc.status = IBV_WC_SUCCESS;
        wc.opcode = wr.opcode == IBV_WR_SEND ? IBV_WC_SEND : IBV_WC_RDMA_WRITE;
        q->completions.push_back(wc);
      }
    }
    return true;
  }

  static ibv_device** getDeviceList(int* n) {
    *n = 1;
    return list;
  }
  static void freeDeviceList(ibv_device**) {}
  static const char* getDeviceName(ibv_device*) { return "fake0"; }
  static ibv_context* openDevice(ibv_device*) {
    context.ops.post_send = &postSend;
    context.ops.post_recv = &postRecv;
    return &context;
  }
  static int closeDevice(ibv_context*) { return 0; }
  static int queryDevice(ibv_context*, ibv_device_attr* a) {
    a->phys_port_cnt = 1;
    return 0;
  }
  static int queryPort(ibv_context*, uint8_t, ibv_port_attr* a) {
    a->state = IBV_PORT_ACTIVE;
    a->link_layer = IBV_LINK_LAYER_INFINIBAND;
    a->lid = 1;
    a->active_mtu = IBV_MTU_4096;
    a->gid_tbl_len = 1;
    return 0;
  }
  static int queryGid(ibv_context*, uint8_t, int, ibv_gid* g) {
    *g = ibv_gid{};
    return 0;
  }
  static ibv_pd* allocPd(ibv_context* c) {
    pd.context = c;
    return &pd;
  }
  static int deallocPd(ibv_pd*) { return 0; }
  static ibv_mr* regMr(ibv_pd*, void* addr, size_t length, int) {
    const auto* begin = static_cast<const uint8_t*>(addr);
    if (begin < refuseEnd && begin + length > refuseBegin) {
      errno = EFAULT;
      return nullptr;
    }
    auto* mr = new ibv_mr{};
    mr->addr = addr;
    mr->length = length;
    mr->lkey = mr->rkey = nextKey++;
    mrs[mr->rkey] = mr;
    return mr;
  }
  static int deregMr(ibv_mr* mr) {
    mrs.erase(mr->rkey);
    delete mr;
    return 0;
  }
  static ibv_comp_channel* createCompChannel(ibv_context*) { return &channel; }
  static int destroyCompChannel(ibv_comp_channel*) { return 0; }
  static ibv_cq* createCq(ibv_context* c, int, void*, ibv_comp_channel*, int) {
    cq.context = c;
    return &cq;
  }
  static int destroyCq(ibv_cq*) { return 0; }
  static ibv_qp* createQp(ibv_pd*, ibv_qp_init_attr*) {
    auto q = std::make_unique<FakeQp>();
    q->qp.context = &context;
    q->qp.qp_num = nextQpn++;
    ibv_qp* qp = &q->qp;
    qps[qp->qp_num] = std::move(q);
    return qp;
  }
  static int modifyQp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
    if ((mask & IBV_QP_DEST_QPN) != 0) of(qp)->peerQpn = attr->dest_qp_num;
    if ((mask & IBV_QP_TIMEOUT) != 0) of(qp)->ackTimeout = attr->timeout;
    if ((mask & IBV_QP_RETRY_CNT) != 0) of(qp)->retryCount = attr->retry_cnt;
    return 0;
  }
  static int destroyQp(ibv_qp* qp) {
    qps.erase(qp->qp_num);
    return 0;
  }
  static const char* wcStatusStr(ibv_wc_status) { return "fake status"; }

  static const VerbsApi& api() {
    static const VerbsApi a = [] {
      VerbsApi v;
      v.getDeviceList = &getDeviceList;
      v.freeDeviceList = &freeDeviceList;
      v.getDeviceName = &getDeviceName;
      v.openDevice = &openDevice;
      v.closeDevice = &closeDevice;
      v.queryDevice = &queryDevice;
      v.queryPort = &queryPort;
      v.queryGid = &queryGid;
      v.allocPd = &allocPd;
      v.deallocPd = &deallocPd;
      v.regMr = &regMr;
      v.deregMr = &deregMr;
      v.createCompChannel = &createCompChannel;
      v.destroyCompChannel = &destroyCompChannel;
      v.createCq = &createCq;
      v.destroyCq = &destroyCq;
      v.createQp = &createQp;
      v.modifyQp = &modifyQp;
      v.destroyQp = &destroyQp;
      v.wcStatusStr = &wcStatusStr;
      return v;
    }();
    return a;
  }
};

struct MismatchCase {
  size_t sent, expected;
  bool warm;  // credits, and one exchange first: a credit carries the head; else none
};

// Rank 0 and rank 1, one connector each towards the other.
class IbProtocol : public ::testing::Test {
 protected:
  void start(int credits, size_t creditBytes = IbConnector::kDefaultCreditBytes, int qps = 1) {
    Fake::wireError.clear();
    Fake::refuseBegin = Fake::refuseEnd = nullptr;
    Fake::failQpn = 0;
    credit_ = creditBytes;
    auto dev = IbDevice::open(Fake::api(), "", -1, 64);
    ASSERT_TRUE(dev.isOk()) << dev.status().message();
    dev_ = std::move(*dev);
    cache_ = std::make_unique<RegCache>(Fake::api(), dev_->pd(),
                                        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    for (int r = 0; r < 2; ++r) {
      auto c =
          IbConnector::create(r, 1 - r, 0, dev_.get(), cache_.get(), credits, creditBytes, qps);
      ASSERT_TRUE(c.isOk()) << c.status().message();
      side_[r] = std::move(*c);
      side_[r]->setPoller(&IbProtocol::poll, side_[r].get());
    }
    for (int r = 0; r < 2; ++r) ASSERT_TRUE(side_[r]->connect(side_[1 - r]->localInfo()).isOk());
  }
  void TearDown() override {
    rng_ = nullptr;
    side_[0].reset();
    side_[1].reset();
    cache_.reset();
    dev_.reset();
    EXPECT_TRUE(Fake::mrs.empty()) << "a registration outlived its connector or cache";
  }
  // The transport's poll, for one connector: its queue pairs' completions, the queue
  // pairs in random order when rng_ is set (a real completion queue interleaves them).
  static Status poll(void* arg, bool* progressed) {
    auto* c = static_cast<IbConnector*>(arg);
    std::vector<QpInfo> infos = c->localInfo();
    if (rng_ != nullptr) std::shuffle(infos.begin(), infos.end(), *rng_);
    for (const QpInfo& info : infos) {
      FakeQp* q = Fake::qps.at(info.qpn).get();
      while (!q->completions.empty()) {
        const ibv_wc wc = q->completions.front();
        q->completions.pop_front();
        c->complete(wc);
        *progressed = true;
      }
    }
    return Status::ok();
  }
  FakeQp* qpOf(int r, int q = 0) { return Fake::qps.at(side_[r]->localInfo()[q].qpn).get(); }
  // Messages either side of the credit from rank `from` to the other; `recvFirst`: each
  // receive is posted before its send, else after (its head may wait in a credit).
  void exchange(int from, bool recvFirst);
  // Progress and wire, alternately, until nothing moves; false on a wire error.
  // With rng_ set, the wire instead carries one to three work requests of one queue pair
  // chosen at random per round: queue pairs overtake each other, each stays in order.
  bool run(int rounds = 200) {
    if (rng_ != nullptr) rounds *= 1000;
    for (int i = 0; i < rounds; ++i) {
      bool moved = false;
      std::vector<FakeQp*> pending;
      for (int r = 0; r < 2; ++r) {
        (void)side_[r]->progress(&moved);
        for (int q = 0; q < side_[r]->qps(); ++q) {
          if (!qpOf(r, q)->sends.empty()) pending.push_back(qpOf(r, q));
        }
      }
      if (pending.empty() && !moved) return true;
      if (rng_ != nullptr && !pending.empty()) {
        FakeQp* q = pending[(*rng_)() % pending.size()];
        if (!Fake::deliver(q, 1 + (*rng_)() % 3)) return false;
        continue;
      }
      for (FakeQp* q : pending) {
        if (!Fake::deliver(q)) return false;
      }
    }
    return true;
  }
  static inline std::mt19937* rng_ = nullptr;

  // Rank 0 sends c.sent bytes, rank 1 receives c.expected (after start()): both sides
  // must fail naming the other, and the receive must not pass for done.
  void expectMismatchFailsBothSides(const MismatchCase& c) {
    std::vector<uint8_t> src(c.sent, 5), dst(c.expected + 1);
    Request sreq, rreq;
    RecvSink sink;
    sink.dst = dst.data();
    ASSERT_TRUE(side_[0]->postSend(src.data(), c.sent, &sreq).isOk());
    ASSERT_TRUE(run()) << Fake::wireError;
    ASSERT_TRUE(side_[1]->postRecv(sink, c.expected, &rreq).isOk());
    ASSERT_TRUE(run()) << Fake::wireError;
    for (int r = 0; r < 2; ++r) {
      const Status& e = side_[r]->error();
      ASSERT_FALSE(e.isOk()) << "rank " << r << " did not fail";
      EXPECT_NE(e.message().find("rank " + std::to_string(1 - r)), std::string::npos)
          << e.message();
      EXPECT_EQ(e.peer(), 1 - r) << e.message();
    }
    EXPECT_FALSE(rreq.done);
  }

  std::unique_ptr<IbDevice> dev_;
  std::unique_ptr<RegCache> cache_;
  std::unique_ptr<IbConnector> side_[2];
  size_t credit_ = 0;  // the bytes each credit covers
};

constexpr size_t kCredit = IbConnector::kDefaultCreditBytes;

std::vector<uint8_t> pattern(size_t n, int seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 131 + seed * 7) >> 3);
  return v;
}

void IbProtocol::exchange(int from, bool recvFirst) {
  IbConnector* tx = side_[from].get();
  IbConnector* rx = side_[1 - from].get();
  const size_t sizes[] = {0, 1, credit_ - 1, credit_, credit_ + 1, (3 << 20) + 5, 4099, 0};
  int seed = 0;
  for (size_t size : sizes) {
    std::vector<uint8_t> src = pattern(size, ++seed), dst(size + 1, 0xee);
    Request sreq, rreq;
    RecvSink sink;
    sink.dst = dst.data();
    if (recvFirst) {
      ASSERT_TRUE(rx->postRecv(sink, size, &rreq).isOk());
    }
    ASSERT_TRUE(tx->postSend(src.data(), size, &sreq).isOk());
    ASSERT_TRUE(run()) << Fake::wireError;
    if (!recvFirst) {
      ASSERT_TRUE(rx->postRecv(sink, size, &rreq).isOk());
    }
    ASSERT_TRUE(run()) << Fake::wireError;
    ASSERT_TRUE(sreq.done && rreq.done)
        << size << " bytes: send done " << sreq.done << ", receive done " << rreq.done;
    EXPECT_EQ(std::memcmp(dst.data(), src.data(), size), 0) << size << " bytes differ";
    EXPECT_EQ(dst[size], 0xee) << "a write past a " << size << "-byte receive";
  }
}

TEST_F(IbProtocol, MessagesAroundTheCreditSizeArriveIntact) {
  for (size_t creditBytes : {size_t{256} << 10, kCredit}) {
    for (int credits : {0, 2, 8}) {
      SCOPED_TRACE("credits " + std::to_string(credits) + " of " + std::to_string(creditBytes));
      start(credits, creditBytes);
      for (bool recvFirst : {true, false}) {
        exchange(0, recvFirst);
        exchange(1, recvFirst);
      }
      EXPECT_TRUE(side_[0]->error().isOk()) << side_[0]->error().message();
      EXPECT_TRUE(side_[1]->error().isOk()) << side_[1]->error().message();
      TearDown();
    }
  }
}

// A collective's chunk step by step, the receive posted only when its step starts (after
// the sender posted): with credits as large as the chunk, every chunk goes at once in
// one write and its send completes before the receive is posted, so no step waits for a
// clear-to-send round trip; smaller credits leave the rest of each chunk to one.
TEST_F(IbProtocol, ChunksThatFitACreditNeverWaitForAClearToSend) {
  constexpr size_t kChunk = size_t{1} << 20;
  constexpr int kSteps = 6;
  for (size_t creditBytes : {kChunk, kChunk / 4}) {
    SCOPED_TRACE("credit " + std::to_string(creditBytes));
    start(2, creditBytes);
    ASSERT_TRUE(run()) << Fake::wireError;  // the receiver grants its credits
    const IbConnector::Stats before[2] = {side_[0]->stats(), side_[1]->stats()};
    bool sentBeforeReceive = true;
    for (int step = 0; step < kSteps; ++step) {
      std::vector<uint8_t> src = pattern(kChunk, step), dst(kChunk, 0);
      Request sreq, rreq;
      RecvSink sink;
      sink.dst = dst.data();
      ASSERT_TRUE(side_[0]->postSend(src.data(), kChunk, &sreq).isOk());
      ASSERT_TRUE(run()) << Fake::wireError;
      sentBeforeReceive = sentBeforeReceive && sreq.done;
      ASSERT_TRUE(side_[1]->postRecv(sink, kChunk, &rreq).isOk());
      ASSERT_TRUE(run()) << Fake::wireError;
      ASSERT_TRUE(sreq.done && rreq.done) << "step " << step;
      ASSERT_EQ(dst, src) << "step " << step;
    }
    const IbConnector::Stats& tx = side_[0]->stats();
    const IbConnector::Stats& rx = side_[1]->stats();
    const uint64_t cts = rx.ctsSent - before[1].ctsSent;
    const uint64_t writes = tx.writes - before[0].writes;
    if (creditBytes >= kChunk) {
      EXPECT_TRUE(sentBeforeReceive) << "a chunk's send waited for its receive";
      EXPECT_EQ(cts, 0u) << "clear-to-sends for chunks that fit a credit";
      EXPECT_EQ(writes, static_cast<uint64_t>(kSteps)) << "more than one write per chunk";
      EXPECT_EQ(tx.creditWrites - before[0].creditWrites, static_cast<uint64_t>(kSteps));
      // The receiver only granted credits: unsignaled, none woke it.
      EXPECT_EQ(rx.sendCompletions - before[1].sendCompletions, 0u);
      EXPECT_EQ(tx.sendCompletions - before[0].sendCompletions, static_cast<uint64_t>(kSteps));
    } else {
      EXPECT_FALSE(sentBeforeReceive);
      EXPECT_EQ(cts, static_cast<uint64_t>(kSteps)) << "one round trip per chunk's rest";
    }
    EXPECT_EQ(tx.writeBytes - before[0].writeBytes, kSteps * kChunk);
    EXPECT_TRUE(side_[0]->error().isOk() && side_[1]->error().isOk());
    TearDown();
  }
}

// A message larger than its credit sends nothing into it: an empty write frees the credit
// and the whole message goes straight into the receive's buffer once the receive asks
// for it (no copy out of a credit); one that fits goes whole. Credits freed that way are
// granted again: a small message after many large ones still completes before its receive.
TEST_F(IbProtocol, MessagesLargerThanTheCreditGoZeroCopy) {
  constexpr size_t kCreditSize = size_t{64} << 10;
  start(2, kCreditSize);
  ASSERT_TRUE(run()) << Fake::wireError;
  EXPECT_EQ(creditHead(kCreditSize, kCreditSize), kCreditSize);
  EXPECT_EQ(creditHead(0, kCreditSize), 0u);
  EXPECT_EQ(creditHead(kCreditSize + 1, kCreditSize), 0u);
  EXPECT_EQ(creditHead(size_t{13} << 20, 4096), 0u);
  for (bool recvFirst : {false, true}) {
    for (size_t size : {kCreditSize + 1, size_t{13} << 20, kCreditSize, size_t{4} << 20,
                        size_t{100}, size_t{5} << 20, size_t{0}}) {
      SCOPED_TRACE(std::to_string(size) + (recvFirst ? " bytes, receive first" : " bytes"));
      std::vector<uint8_t> src = pattern(size, 5), dst(size + 1, 0xee);
      Request sreq, rreq;
      RecvSink sink;
      sink.dst = dst.data();
      const IbConnector::Stats before = side_[0]->stats();
      if (recvFirst) {
        ASSERT_TRUE(side_[1]->postRecv(sink, size, &rreq).isOk());
      }
      ASSERT_TRUE(side_[0]->postSend(src.data(), size, &sreq).isOk());
      ASSERT_TRUE(run()) << Fake::wireError;
      // Without its receive, only a message that fits the credit can have completed.
      if (!recvFirst) {
        EXPECT_EQ(sreq.done, size <= kCreditSize);
        EXPECT_EQ(sreq.completed, size <= kCreditSize ? size : 0u);
        ASSERT_TRUE(side_[1]->postRecv(sink, size, &rreq).isOk());
      }
      ASSERT_TRUE(run()) << Fake::wireError;
      ASSERT_TRUE(sreq.done && rreq.done);
      EXPECT_EQ(std::memcmp(dst.data(), src.data(), size), 0);
      EXPECT_EQ(dst[size], 0xee) << "a write past the receive";
      const IbConnector::Stats& after = side_[0]->stats();
      EXPECT_EQ(after.creditWriteBytes - before.creditWriteBytes, size <= kCreditSize ? size : 0u)
          << "bytes through a credit";
      EXPECT_EQ(after.writeBytes - before.writeBytes, size) << "bytes written in all";
    }
  }
  EXPECT_TRUE(side_[0]->error().isOk()) << side_[0]->error().message();
  EXPECT_TRUE(side_[1]->error().isOk()) << side_[1]->error().message();
}

// Without credits every message costs the receiver a clear-to-send; only every
// (kMaxUnsignaled + 1)-th of a run completes, retiring those before it, so hundreds of
// them in a row neither fill the send queue nor each raise a completion.
TEST_F(IbProtocol, ClearToSendsMostlyGoUnsignaledAndNeverFillTheQueue) {
  constexpr int kMessages = 3 * IbConnector::kSendDepth;
  start(0);
  std::vector<uint8_t> src = pattern(64, 9), dst(64);
  for (int i = 0; i < kMessages; ++i) {
    Request sreq, rreq;
    RecvSink sink;
    sink.dst = dst.data();
    ASSERT_TRUE(side_[1]->postRecv(sink, src.size(), &rreq).isOk());
    ASSERT_TRUE(side_[0]->postSend(src.data(), src.size(), &sreq).isOk());
    ASSERT_TRUE(run()) << Fake::wireError;
    ASSERT_TRUE(sreq.done && rreq.done) << "message " << i << " stuck";
    ASSERT_EQ(dst, src);
  }
  const IbConnector::Stats& rx = side_[1]->stats();
  EXPECT_EQ(rx.ctsSent, static_cast<uint64_t>(kMessages));
  EXPECT_EQ(rx.sendCompletions,
            static_cast<uint64_t>(kMessages / (IbConnector::kMaxUnsignaled + 1)));
  EXPECT_TRUE(side_[0]->error().isOk() && side_[1]->error().isOk());
}

// A source the device cannot register goes through send staging slots smaller than a
// credit: the credit's head is written in several pieces, the last with the immediate.
TEST_F(IbProtocol, CreditsLargerThanAStagingSlotFromUnregistrableMemory) {
  constexpr size_t kBigCredit = 4 * IbConnector::kStageBytes;
  start(2, kBigCredit);
  ASSERT_TRUE(run()) << Fake::wireError;
  // Every buffer lives to the end: a freed receive buffer's registration, still cached,
  // must not make a later source at its address registrable.
  std::deque<std::vector<uint8_t>> keep;
  for (size_t size : {kBigCredit, kBigCredit + 12345, IbConnector::kStageBytes + 1, size_t{3}}) {
    SCOPED_TRACE(size);
    std::vector<uint8_t>& src = keep.emplace_back(pattern(size, 3));
    std::vector<uint8_t>& dst = keep.emplace_back(size, 0);
    Fake::refuseBegin = src.data();
    Fake::refuseEnd = src.data() + size;
    Request sreq, rreq;
    RecvSink sink;
    sink.dst = dst.data();
    const uint64_t writesBefore = side_[0]->stats().writes;
    ASSERT_TRUE(side_[0]->postSend(src.data(), size, &sreq).isOk());
    ASSERT_TRUE(run()) << Fake::wireError;
    ASSERT_TRUE(side_[1]->postRecv(sink, size, &rreq).isOk());
    ASSERT_TRUE(run()) << Fake::wireError;
    ASSERT_TRUE(side_[0]->error().isOk()) << side_[0]->error().message();
    ASSERT_TRUE(side_[1]->error().isOk()) << side_[1]->error().message();
    ASSERT_TRUE(sreq.done && rreq.done);
    EXPECT_EQ(dst, src);
    const uint64_t slots = (size + IbConnector::kStageBytes - 1) / IbConnector::kStageBytes;
    // A message larger than the credit also answers it with an empty write.
    EXPECT_EQ(side_[0]->stats().writes - writesBefore, slots + (size > kBigCredit ? 1 : 0))
        << "one write per staging slot";
  }
  Fake::refuseBegin = Fake::refuseEnd = nullptr;
}

TEST(IbCreditBytes, DefaultWhateverTheChunkUnlessSetAndStayInRange) {
  constexpr size_t kMiB = size_t{1} << 20;
  Config c;
  c.transport = "ib";
  EXPECT_EQ(creditBytesFor(c, 1), IbConnector::kDefaultCreditBytes);
  c.transport = "mixed";
  EXPECT_EQ(creditBytesFor(c, 1), IbConnector::kDefaultCreditBytes);
  // The chunk does not matter: a chunk larger than the credit goes zero-copy.
  c.chunkBytesSet = true;
  c.chunkBytes = 2 * kMiB;
  EXPECT_EQ(creditBytesFor(c, 1), IbConnector::kDefaultCreditBytes);
  c.chunkBytes = 64;
  EXPECT_EQ(creditBytesFor(c, 1), IbConnector::kDefaultCreditBytes);
  // Many peers: the credits of all links stay within the budget.
  c.ibCredits = 2;
  EXPECT_EQ(creditBytesFor(c, 31), IbConnector::kDefaultCreditBytes);
  constexpr int kManyPeers = 4095;
  EXPECT_EQ(creditBytesFor(c, kManyPeers),
            IbConnector::kCreditBudgetBytes / (2 * kManyPeers) / 4096 * 4096);
  EXPECT_LT(creditBytesFor(c, kManyPeers), IbConnector::kDefaultCreditBytes);
  EXPECT_LE(kManyPeers * 2 * creditBytesFor(c, kManyPeers), IbConnector::kCreditBudgetBytes);
  EXPECT_EQ(creditBytesFor(c, 100000), IbConnector::kMinCreditBytes);
  // Set: taken as it is (within range), whatever the peers.
  c.ibCreditBytes = 256 << 10;
  EXPECT_EQ(creditBytesFor(c, 1), size_t{256} << 10);
  EXPECT_EQ(creditBytesFor(c, 127), size_t{256} << 10);
  c.ibCreditBytes = 8 * kMiB;
  EXPECT_EQ(creditBytesFor(c, 127), 8 * kMiB);
  c.ibCreditBytes = 64 * kMiB;
  EXPECT_EQ(creditBytesFor(c, 1), IbConnector::kMaxCreditBytes);
  c.ibCreditBytes = 1;
  EXPECT_EQ(creditBytesFor(c, 1), IbConnector::kMinCreditBytes);
}

TEST_F(IbProtocol, SmallSendsCompleteBeforeTheirReceiveOnlyWithCredits) {
  for (int credits : {0, 2}) {
    start(credits);
    // A first exchange lets rank 1 grant its credits.
    exchange(0, true);
    std::vector<uint8_t> small = pattern(100, 1), large = pattern(kCredit + 10, 2);
    Request s1, s2;
    ASSERT_TRUE(side_[0]->postSend(small.data(), small.size(), &s1).isOk());
    ASSERT_TRUE(side_[0]->postSend(large.data(), large.size(), &s2).isOk());
    ASSERT_TRUE(run()) << Fake::wireError;
    EXPECT_EQ(s1.done, credits > 0) << "credits " << credits;
    EXPECT_FALSE(s2.done) << "a send past the credit finished without its receive";
    EXPECT_EQ(s2.completed, credits > 0 ? creditHead(large.size(), kCredit) : 0)
        << "credits " << credits;
    // The receives come late; everything arrives.
    std::vector<uint8_t> d1(100), d2(kCredit + 10);
    Request r1, r2;
    RecvSink k1, k2;
    k1.dst = d1.data();
    k2.dst = d2.data();
    ASSERT_TRUE(side_[1]->postRecv(k1, d1.size(), &r1).isOk());
    ASSERT_TRUE(side_[1]->postRecv(k2, d2.size(), &r2).isOk());
    ASSERT_TRUE(run()) << Fake::wireError;
    EXPECT_TRUE(s1.done && s2.done && r1.done && r2.done);
    EXPECT_EQ(d1, small);
    EXPECT_EQ(d2, large);
    TearDown();
  }
}

// Both ranks send to each other at once, several messages per step, like a ring step:
// credits for later messages wait at the sender while the rest of the current one goes.
TEST_F(IbProtocol, ExchangesInBothDirectionsWithReductions) {
  start(2);
  constexpr size_t kCount = (3 << 20) / 4 + 17;  // int32 elements: credit + staging slots
  for (int step = 0; step < 4; ++step) {
    std::vector<int32_t> in[2], acc[2], out[2];
    Request sreq[2], rreq[2];
    for (int r = 0; r < 2; ++r) {
      in[r].resize(kCount);
      acc[r].resize(kCount);
      out[r].assign(kCount, -1);
      std::iota(in[r].begin(), in[r].end(), step * 1000 + r);
      std::iota(acc[r].begin(), acc[r].end(), 7 * r);
    }
    for (int r = 0; r < 2; ++r) {
      RecvSink sink;
      sink.dst = reinterpret_cast<uint8_t*>(out[r].data());
      sink.accum = reinterpret_cast<const uint8_t*>(acc[r].data());
      sink.elemSize = 4;
      sink.reduce = [](void* dst, const void* a, const void* b, size_t n) {
        auto* d = static_cast<int32_t*>(dst);
        auto* x = static_cast<const int32_t*>(a);
        auto* y = static_cast<const int32_t*>(b);
        for (size_t i = 0; i < n; ++i) d[i] = x[i] + y[i];
      };
      ASSERT_TRUE(side_[r]->postSend(in[r].data(), kCount * 4, &sreq[r]).isOk());
      // Rank 1 posts its receive only after a round of progress: late, against credits.
      if (r == 0) {
        ASSERT_TRUE(side_[r]->postRecv(sink, kCount * 4, &rreq[r]).isOk());
      }
      if (r == 1) {
        ASSERT_TRUE(run(3)) << Fake::wireError;
        ASSERT_TRUE(side_[r]->postRecv(sink, kCount * 4, &rreq[r]).isOk());
      }
    }
    ASSERT_TRUE(run(2000)) << Fake::wireError;
    for (int r = 0; r < 2; ++r) {
      ASSERT_TRUE(sreq[r].done && rreq[r].done) << "step " << step << " rank " << r;
      for (size_t i = 0; i < kCount; i += 4093) {
        ASSERT_EQ(out[r][i], acc[r][i] + in[1 - r][i]) << "step " << step << " element " << i;
      }
      ASSERT_EQ(out[r][kCount - 1], acc[r][kCount - 1] + in[1 - r][kCount - 1]);
    }
  }
}

TEST_F(IbProtocol, SizeMismatchesFailBothSidesNamingThePeer) {
  const MismatchCase cases[] = {
      {100, 200, false},
      {100, 200, true},
      {100, 300000, true},
      {300000, 100, true},
      {3 << 20, 2 << 20, true},
      {0, 1, true},
      {1, 0, true},
      {kCredit, kCredit + 1, true},
      // A message larger than the credit answers it with an empty write, which must not
      // pass for a 0-byte message, nor a message that fits for a larger one.
      {kCredit + 1, kCredit, true},
      {kCredit + 1, 0, true},
      {0, kCredit + 1, true},
      {kCredit + 2, kCredit + 1, true},
  };
  for (const MismatchCase& c : cases) {
    SCOPED_TRACE(std::to_string(c.sent) + " sent, " + std::to_string(c.expected) +
                 (c.warm ? " expected, through a credit" : " expected, no credits"));
    start(c.warm ? 2 : 0);
    if (c.warm) exchange(0, true);
    expectMismatchFailsBothSides(c);
    TearDown();
  }
}

// The receiver's split of a clear-to-send's range: every byte in exactly one stripe, no
// more stripes than queue pairs, none empty, one stripe for small pieces or one queue pair.
TEST(IbStripePlan, CoversTheRangeWithNonEmptyStripesOnePerQueuePair) {
  EXPECT_EQ(stripePlan(size_t{1} << 20, 1).stripes, 1);
  EXPECT_EQ(stripePlan(size_t{1} << 20, 1).stripeBytes, 0u);
  EXPECT_EQ(stripePlan(0, 4).stripes, 1);
  EXPECT_EQ(stripePlan(2 * kMinStripeBytes - 1, 8).stripes, 1);
  EXPECT_EQ(stripePlan(2 * kMinStripeBytes, 8).stripes, 2);
  EXPECT_EQ(stripePlan(size_t{1} << 20, 4).stripeBytes, 256u << 10);
  EXPECT_EQ(stripeCount(0, 4096), 1);
  EXPECT_EQ(stripeCount(100, 0), 1);
  for (int qps = 1; qps <= IbConnector::kMaxQps; ++qps) {
    for (size_t bytes : {size_t{0}, size_t{1}, size_t{7}, size_t{4099}, size_t{8192}, size_t{12289},
                         size_t{65537}, size_t{1000003}, size_t{1} << 30}) {
      SCOPED_TRACE(std::to_string(bytes) + " bytes over " + std::to_string(qps));
      const StripePlan plan = stripePlan(bytes, qps);
      ASSERT_GE(plan.stripes, 1);
      ASSERT_LE(plan.stripes, qps);
      ASSERT_EQ(stripeCount(bytes, plan.stripeBytes), plan.stripes);
      if (plan.stripes > 1) {
        EXPECT_GE(plan.stripeBytes, kMinStripeBytes);
        EXPECT_LT(static_cast<size_t>(plan.stripes - 1) * plan.stripeBytes, bytes);
        EXPECT_GE(static_cast<size_t>(plan.stripes) * plan.stripeBytes, bytes);
      }
    }
  }
}

// Several queue pairs per peer: odd sizes either side of the credit and the striping
// threshold, multi-MiB ones, with and without credits, receive first or last; the wire
// carries the queue pairs in random interleavings. Large zero-copy pieces use every queue
// pair; the data matches the source and nothing is written past the receive.
TEST_F(IbProtocol, StripedMessagesArriveIntactWhateverTheOrderAcrossQueuePairs) {
  std::mt19937 rng(12345);
  const size_t sizes[] = {
      0, 1, 7, 4099, 2 * kMinStripeBytes, kCredit + 1, 1000003, (3 << 20) + 5, 0, size_t{9} << 20};
  for (int qps : {2, 3, 4, 8}) {
    for (int credits : {0, 2}) {
      SCOPED_TRACE(std::to_string(qps) + " queue pairs, credits " + std::to_string(credits));
      start(credits, kCredit, qps);
      ASSERT_EQ(side_[0]->qps(), qps);
      rng_ = &rng;
      int seed = 0;
      for (bool recvFirst : {true, false}) {
        for (size_t size : sizes) {
          SCOPED_TRACE(std::to_string(size) + (recvFirst ? " bytes, receive first" : " bytes"));
          const int from = seed % 2;
          std::vector<uint8_t> src = pattern(size, ++seed), dst(size + 1, 0xee);
          Request sreq, rreq;
          RecvSink sink;
          sink.dst = dst.data();
          const IbConnector::Stats before = side_[from]->stats();
          if (recvFirst) {
            ASSERT_TRUE(side_[1 - from]->postRecv(sink, size, &rreq).isOk());
          }
          ASSERT_TRUE(side_[from]->postSend(src.data(), size, &sreq).isOk());
          ASSERT_TRUE(run()) << Fake::wireError;
          if (!recvFirst) {
            ASSERT_TRUE(side_[1 - from]->postRecv(sink, size, &rreq).isOk());
          }
          ASSERT_TRUE(run()) << Fake::wireError;
          ASSERT_TRUE(side_[0]->error().isOk()) << side_[0]->error().message();
          ASSERT_TRUE(side_[1]->error().isOk()) << side_[1]->error().message();
          ASSERT_TRUE(sreq.done && rreq.done)
              << "send done " << sreq.done << ", receive done " << rreq.done;
          EXPECT_EQ(std::memcmp(dst.data(), src.data(), size), 0) << "bytes differ";
          EXPECT_EQ(dst[size], 0xee) << "a write past the receive";
          const IbConnector::Stats& after = side_[from]->stats();
          EXPECT_EQ(after.writeBytes - before.writeBytes, size);
          // A zero-copy piece (past the credit, or without credits) of at least two pages
          // goes in stripes, one per queue pair stripePlan() names; anything else on
          // queue pair 0.
          const bool zeroCopy = credits == 0 || size > kCredit;
          const int stripes = zeroCopy ? stripePlan(size, qps).stripes : 1;
          EXPECT_EQ(after.stripedCts > before.stripedCts, stripes > 1);
          if (size >= (size_t{1} << 20)) {
            EXPECT_EQ(stripes, qps);
          }
          for (int q = 0; q < qps; ++q) {
            EXPECT_EQ(after.qpWriteBytes[q] > before.qpWriteBytes[q], size > 0 && q < stripes)
                << "queue pair " << q;
          }
        }
      }
      TearDown();
    }
  }
}

// The receiver counts one immediate per stripe: with every stripe but queue pair 0's
// carried, the receive is not done (nor the send, whose writes on queue pair 0 have not
// completed); queue pair 0 last completes both.
TEST_F(IbProtocol, AStripedMessageWaitsForItsLastStripe) {
  constexpr int kQps = 4;
  for (int late : {0, 1, kQps - 1}) {
    SCOPED_TRACE("queue pair " + std::to_string(late) + " last");
    start(0, kCredit, kQps);
    const size_t size = (2 << 20) + 3;
    std::vector<uint8_t> src = pattern(size, 4), dst(size, 0);
    Request sreq, rreq;
    RecvSink sink;
    sink.dst = dst.data();
    ASSERT_TRUE(side_[1]->postRecv(sink, size, &rreq).isOk());
    ASSERT_TRUE(side_[0]->postSend(src.data(), size, &sreq).isOk());
    bool moved = false;
    ASSERT_TRUE(side_[1]->progress(&moved).isOk());  // the clear-to-send
    ASSERT_TRUE(Fake::deliver(qpOf(1, 0)));
    ASSERT_TRUE(side_[0]->progress(&moved).isOk());  // the writes, on every queue pair
    for (int q = 0; q < kQps; ++q) {
      ASSERT_FALSE(qpOf(0, q)->sends.empty()) << "nothing written on queue pair " << q;
      if (q != late) {
        ASSERT_TRUE(Fake::deliver(qpOf(0, q))) << Fake::wireError;
      }
    }
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(side_[0]->progress(&moved).isOk());
      ASSERT_TRUE(side_[1]->progress(&moved).isOk());
    }
    EXPECT_FALSE(rreq.done) << "the receive completed before its last stripe landed";
    EXPECT_FALSE(sreq.done) << "the send completed before its last stripe's writes did";
    ASSERT_TRUE(Fake::deliver(qpOf(0, late))) << Fake::wireError;
    ASSERT_TRUE(run()) << Fake::wireError;
    ASSERT_TRUE(sreq.done && rreq.done);
    EXPECT_EQ(dst, src);
    EXPECT_TRUE(side_[0]->error().isOk() && side_[1]->error().isOk());
    TearDown();
  }
}

// Striped pieces into receive staging (reductions) and out of send staging (a source the
// device refuses), both directions at once, queue pairs interleaved at random.
TEST_F(IbProtocol, StripedReductionsAndStagedSources) {
  std::mt19937 rng(777);
  start(2, kCredit, 4);
  rng_ = &rng;
  constexpr size_t kCount = (3 << 20) / 4 + 17;
  std::deque<std::vector<int32_t>> keep;
  for (int step = 0; step < 3; ++step) {
    std::vector<int32_t> in[2], acc[2], out[2];
    Request sreq[2], rreq[2];
    for (int r = 0; r < 2; ++r) {
      in[r].resize(kCount);
      acc[r].resize(kCount);
      out[r].assign(kCount, -1);
      std::iota(in[r].begin(), in[r].end(), step * 1000 + r);
      std::iota(acc[r].begin(), acc[r].end(), 7 * r);
    }
    // Rank 1's source cannot be registered: it goes through send staging.
    Fake::refuseBegin = reinterpret_cast<const uint8_t*>(in[1].data());
    Fake::refuseEnd = Fake::refuseBegin + kCount * 4;
    for (int r = 0; r < 2; ++r) {
      RecvSink sink;
      sink.dst = reinterpret_cast<uint8_t*>(out[r].data());
      sink.accum = reinterpret_cast<const uint8_t*>(acc[r].data());
      sink.elemSize = 4;
      sink.reduce = [](void* dst, const void* a, const void* b, size_t n) {
        auto* d = static_cast<int32_t*>(dst);
        auto* x = static_cast<const int32_t*>(a);
        auto* y = static_cast<const int32_t*>(b);
        for (size_t i = 0; i < n; ++i) d[i] = x[i] + y[i];
      };
      ASSERT_TRUE(side_[r]->postSend(in[r].data(), kCount * 4, &sreq[r]).isOk());
      ASSERT_TRUE(side_[r]->postRecv(sink, kCount * 4, &rreq[r]).isOk());
    }
    ASSERT_TRUE(run()) << Fake::wireError;
    Fake::refuseBegin = Fake::refuseEnd = nullptr;
    for (int r = 0; r < 2; ++r) {
      ASSERT_TRUE(side_[r]->error().isOk()) << side_[r]->error().message();
      ASSERT_TRUE(sreq[r].done && rreq[r].done) << "step " << step << " rank " << r;
      for (size_t i = 0; i < kCount; ++i) {
        ASSERT_EQ(out[r][i], acc[r][i] + in[1 - r][i]) << "step " << step << " element " << i;
      }
      EXPECT_GT(side_[r]->stats().stripedCts, 0u);
    }
  }
}

TEST_F(IbProtocol, StripedSizeMismatchesFailBothSidesNamingThePeer) {
  std::mt19937 rng(99);
  const MismatchCase cases[] = {
      {1000003, 1000004, false}, {1000004, 1000003, false}, {3 << 20, 2 << 20, true},
      {0, 1000003, true},        {1000003, 0, true},        {kCredit + 1, 9 << 20, true},
  };
  for (const MismatchCase& c : cases) {
    SCOPED_TRACE(std::to_string(c.sent) + " sent, " + std::to_string(c.expected) + " expected");
    start(c.warm ? 2 : 0, kCredit, 4);
    rng_ = &rng;
    if (c.warm) exchange(0, true);
    expectMismatchFailsBothSides(c);
    TearDown();
  }
}

// A failed work request on any queue pair (the peer stopped answering) fails the link
// with an error naming the peer; the message never passes for done.
TEST_F(IbProtocol, AFailedCompletionOnAnyQueuePairNamesThePeer) {
  constexpr int kQps = 4;
  for (int bad : {0, 2, kQps - 1}) {
    SCOPED_TRACE("queue pair " + std::to_string(bad) + " fails");
    start(0, kCredit, kQps);
    const size_t size = 1 << 20;
    std::vector<uint8_t> src = pattern(size, 6), dst(size, 0);
    Request sreq, rreq;
    RecvSink sink;
    sink.dst = dst.data();
    ASSERT_TRUE(side_[1]->postRecv(sink, size, &rreq).isOk());
    ASSERT_TRUE(side_[0]->postSend(src.data(), size, &sreq).isOk());
    Fake::failQpn = qpOf(0, bad)->qp.qp_num;
    ASSERT_TRUE(run()) << Fake::wireError;
    const Status& e = side_[0]->error();
    ASSERT_FALSE(e.isOk());
    EXPECT_EQ(e.peer(), 1) << e.message();
    EXPECT_NE(e.message().find("rank 1 stopped answering"), std::string::npos) << e.message();
    EXPECT_FALSE(sreq.done);
    EXPECT_FALSE(rreq.done) << "the receive completed without its failed stripe";
    Request later;
    EXPECT_FALSE(side_[0]->postSend(src.data(), size, &later).isOk()) << "the error is not sticky";
    TearDown();
  }
}

TEST_F(IbProtocol, QueuePairCountsOutOfRangeOrUnequalAreRefused) {
  auto dev = IbDevice::open(Fake::api(), "", -1, 64);
  ASSERT_TRUE(dev.isOk()) << dev.status().message();
  RegCache cache(Fake::api(), (*dev)->pd(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  for (int qps : {0, -1, IbConnector::kMaxQps + 1}) {
    auto c = IbConnector::create(0, 1, 0, dev->get(), &cache, 2, kCredit, qps);
    ASSERT_FALSE(c.isOk()) << qps;
    EXPECT_NE(c.status().message().find("BRAID_IB_QPS_PER_PEER"), std::string::npos)
        << c.status().message();
  }
  auto two = IbConnector::create(0, 1, 0, dev->get(), &cache, 2, kCredit, 2);
  auto four = IbConnector::create(1, 0, 1, dev->get(), &cache, 2, kCredit, 4);
  ASSERT_TRUE(two.isOk() && four.isOk());
  EXPECT_EQ((*two)->localInfo().size(), 2u);
  EXPECT_FALSE((*two)->connect((*four)->localInfo()).isOk());
  EXPECT_FALSE((*four)->connect((*two)->localInfo()).isOk());
}

// The local ACK timeout: a short one makes a queue pair resend data that was only late
// (perf/RESULTS.md), so every queue pair of the link gets BRAID_IB_TIMEOUT's value, 18 by
// default; a value out of range is refused naming the variable.
TEST_F(IbProtocol, QueuePairsGetTheAckTimeout) {
  auto dev = IbDevice::open(Fake::api(), "", -1, 64);
  ASSERT_TRUE(dev.isOk()) << dev.status().message();
  RegCache cache(Fake::api(), (*dev)->pd(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  for (int timeout : {0, 14, 31}) {
    const int qps = 3;
    auto a = timeout == 0
                 ? IbConnector::create(0, 1, 0, dev->get(), &cache, 2, kCredit, qps)
                 : IbConnector::create(0, 1, 0, dev->get(), &cache, 2, kCredit, qps, timeout);
    auto b = IbConnector::create(1, 0, 1, dev->get(), &cache, 2, kCredit, qps);
    ASSERT_TRUE(a.isOk() && b.isOk());
    ASSERT_TRUE((*a)->connect((*b)->localInfo()).isOk());
    for (const QpInfo& info : (*a)->localInfo()) {
      const FakeQp* q = Fake::qps.at(info.qpn).get();
      EXPECT_EQ(q->ackTimeout, timeout == 0 ? Config::kDefaultIbTimeout : timeout);
      EXPECT_EQ(q->retryCount, 7);
    }
  }
  for (int timeout : {0, -1, 32}) {
    auto c = IbConnector::create(0, 1, 0, dev->get(), &cache, 2, kCredit, 1, timeout);
    ASSERT_FALSE(c.isOk()) << timeout;
    EXPECT_NE(c.status().message().find("BRAID_IB_TIMEOUT"), std::string::npos)
        << c.status().message();
  }
}

}  // namespace
}  // namespace braid::transport::ib
