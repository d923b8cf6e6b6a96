// The host executor (collectives/host/schedule_runner.h) on hand-written schedules,
// over an in-process fake transport that logs the order transfers are posted in.
//
// 1. Steps with hundreds of transfers on several peers and both directions: every
//    connector sees its sends and receives posted in action order (the FIFO rule),
//    also when an `after` holds one back, and every byte lands where the schedule
//    says (checked against the send buffers, not against the runner).
// 2. Connectors that finish requests out of order (a later send before an earlier
//    one, as a single-copy send can) and one message per poll: a step ends only
//    once all of its transfers are done.
// 3. A stalled peer: pendingPeer() names it, describePending() lists what waits,
//    and restart() runs the schedule again over new buffers.
// 4. A local copy of many pieces in a step with transfers in flight: the runner
//    pumps the connectors between the pieces (so the peer's FIFO keeps moving),
//    and the copy and every transfer still land where the schedule says.
// 5. A copy between spans of different sizes (all-to-all-v whose counts for the
//    rank itself differ) is an error naming the mismatch, not a partial copy.
// 6. Sends marked as blocks (Action::block) reach the connector through
//    postBlockSend with the size of their source buffer; other sends do not.
#include "collectives/host/schedule_runner.h"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "collectives/select.h"

namespace braid::coll {
namespace {

using transport::Request;

// One rank's end of every link. Messages travel through `wires`, a FIFO per
// ordered pair of ranks shared by all fake connectors of one test.
struct Wires {
  explicit Wires(int n) : queues(n * n), n(n) {}
  std::deque<std::vector<uint8_t>>& from(int a, int b) { return queues[a * n + b]; }
  std::vector<std::deque<std::vector<uint8_t>>> queues;
  int n;
};

class FakeConnector : public transport::Connector {
 public:
  FakeConnector(int self, int peer, Wires* wires, bool reverseSendCompletion)
      : self_(self), peer_(peer), wires_(wires), reverse_(reverseSendCompletion) {}

  int peer() const override { return peer_; }

  Status postSend(const void* src, size_t bytes, Request* req) override {
    *req = Request{bytes, 0, false};
    sends_.push_back({static_cast<const uint8_t*>(src), nullptr, req});
    posted.push_back("S" + std::to_string(bytes) + "@" + std::to_string(long(src)));
    return Status::ok();
  }

  // Notes what a block send tells the transport, then queues it as any send.
  Status postBlockSend(const void* src, size_t bytes, size_t extentBytes, Request* req) override {
    blockSends.push_back(std::to_string(bytes) + "/" + std::to_string(extentBytes));
    return postSend(src, bytes, req);
  }

  Status postRecv(const transport::RecvSink& sink, size_t bytes, Request* req) override {
    *req = Request{bytes, 0, false};
    recvs_.push_back({nullptr, sink.dst, req});
    posted.push_back("R" + std::to_string(bytes) + "@" + std::to_string(long(sink.dst)));
    return Status::ok();
  }

  // Puts every posted send on the wire (in order) but completes at most one
  // send and delivers at most one message per call. Finished requests are
  // forgotten at once: the runner reuses their memory for the next step.
  Status progress(bool* progressed) override {
    *progressed = false;
    ++polls;
    for (const Pending& s : sends_) {
      wires_->from(self_, peer_).emplace_back(s.data, s.data + s.req->bytes);
      wired_.push_back(s.req);
    }
    sends_.clear();
    if (!wired_.empty()) {
      Request* done = reverse_ ? wired_.back() : wired_.front();
      reverse_ ? wired_.pop_back() : wired_.pop_front();
      done->completed = done->bytes;
      done->done = *progressed = true;
    }
    auto& inbound = wires_->from(peer_, self_);
    if (!recvs_.empty() && !inbound.empty()) {
      Pending r = recvs_.front();
      recvs_.pop_front();
      if (inbound.front().size() != r.req->bytes) {
        return invalidUsage("rank " + std::to_string(peer_) + " sent " +
                            std::to_string(inbound.front().size()) + " bytes, expected " +
                            std::to_string(r.req->bytes));
      }
      if (r.req->bytes > 0) std::memcpy(r.dst, inbound.front().data(), r.req->bytes);
      inbound.pop_front();
      r.req->completed = r.req->bytes;
      r.req->done = *progressed = true;
    }
    return Status::ok();
  }

  std::vector<std::string> posted;      // "S<bytes>@<address>" / "R<bytes>@<address>", in order
  std::vector<std::string> blockSends;  // "<bytes>/<extent>" of each postBlockSend, in order
  size_t polls = 0;                     // progress() calls so far

 private:
  struct Pending {
    const uint8_t* data;  // sends: where the message is read from
    uint8_t* dst;         // receives: where it lands
    Request* req;
  };
  const int self_, peer_;
  Wires* const wires_;
  const bool reverse_;
  std::vector<Pending> sends_;  // posted, not on the wire yet
  std::deque<Request*> wired_;  // on the wire, not reported done yet
  std::deque<Pending> recvs_;
};

class FakeTransport : public transport::Transport {
 public:
  FakeTransport(int self, Wires* wires, bool reverse) {
    for (int p = 0; p < wires->n; ++p) {
      connectors_.push_back(std::make_unique<FakeConnector>(self, p, wires, reverse));
    }
  }
  const char* name() const override { return "fake"; }
  FakeConnector* connector(int peer) override { return connectors_[peer].get(); }
  Status waitForActivity(const Deadline&, int) override { return Status::ok(); }
  void abort(const Status&) override {}

 private:
  std::vector<std::unique_ptr<FakeConnector>> connectors_;
};

Action transfer(ActionKind kind, int peer, size_t offset, size_t bytes, int after = -1) {
  Action a;
  a.kind = kind;
  a.peer = peer;
  (kind == ActionKind::kSend ? a.src : a.dst) =
      Span{kind == ActionKind::kSend ? BufferId::kSend : BufferId::kRecv, offset, bytes};
  a.after = after;
  return a;
}

// Rank r's schedule for `n` ranks: one step in which r sends `messages` pieces of
// its send buffer to every peer and receives as many from each, the actions of
// all peers and both directions interleaved; piece m is m % 5 bytes long (some
// empty). With `holdBack`, each peer's 3rd receive waits for the step's 1st
// action, which pins the later receives on that lane behind it.
struct Layout {
  int n;
  size_t messages;
  size_t pieceOffset(size_t m) const { return m * 4; }  // piece m: bytes [4m, 4m + m % 5)
  size_t blockBytes() const { return pieceOffset(messages) + 4; }
};

Schedule manyTransfers(const Layout& l, int r, bool holdBack) {
  Schedule s;
  s.algorithm = "many";
  s.steps.emplace_back();
  std::vector<Action>& actions = s.steps[0].actions;
  for (size_t m = 0; m < l.messages; ++m) {
    for (int k = 1; k < l.n; ++k) {
      const int to = (r + k) % l.n, from = (r - k + l.n) % l.n;
      const size_t bytes = m % 5;
      actions.push_back(
          transfer(ActionKind::kSend, to, to * l.blockBytes() + l.pieceOffset(m), bytes));
      actions.push_back(transfer(ActionKind::kRecv, from, from * l.blockBytes() + l.pieceOffset(m),
                                 bytes, holdBack && m == 2 ? 0 : -1));
    }
  }
  return s;
}

uint8_t sendByte(int rank, size_t i) { return static_cast<uint8_t>(rank * 37 + i * 11 + 1); }

// Polls every runner in turn until all are done (or no one moves for a long while).
void runAll(std::vector<std::unique_ptr<ScheduleRunner>>& runners) {
  size_t idle = 0;
  while (idle < 1000) {
    bool all = true, moved = false;
    for (auto& runner : runners) {
      bool progressed = false;
      Status s = runner->progress(&progressed);
      ASSERT_TRUE(s.isOk()) << s.message();
      moved |= progressed;
      all &= runner->done();
    }
    if (all) return;
    idle = moved ? 0 : idle + 1;
  }
  FAIL() << "the runners stopped moving: " << runners[0]->describePending();
}

void checkManyTransfers(int n, size_t messages, bool holdBack, bool reverse) {
  SCOPED_TRACE("n=" + std::to_string(n) + " messages=" + std::to_string(messages) +
               (holdBack ? " hold-back" : "") + (reverse ? " reverse" : ""));
  const Layout l{n, messages};
  const size_t bytes = l.blockBytes() * n;
  Wires wires(n);
  std::vector<std::unique_ptr<FakeTransport>> transports;
  std::vector<Schedule> schedules;
  std::vector<std::vector<uint8_t>> send(n, std::vector<uint8_t>(bytes));
  std::vector<std::vector<uint8_t>> recv(n, std::vector<uint8_t>(bytes, 0xEE));
  std::vector<std::unique_ptr<ScheduleRunner>> runners;
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < bytes; ++i) send[r][i] = sendByte(r, i);
    transports.push_back(std::make_unique<FakeTransport>(r, &wires, reverse));
    schedules.push_back(manyTransfers(l, r, holdBack));
  }
  for (int r = 0; r < n; ++r) {
    Buffers b{send[r].data(), recv[r].data(), nullptr, bytes, bytes, 0};
    runners.push_back(std::make_unique<ScheduleRunner>(transports[r].get(), &schedules[r], b,
                                                       braidUint8, braidSum, n));
  }
  runAll(runners);
  if (::testing::Test::HasFatalFailure()) return;
  for (int r = 0; r < n; ++r) {
    // Posting order per connector: exactly the schedule's order of its actions.
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      std::vector<std::string> sends, recvs, wantSends, wantRecvs;
      for (const std::string& e : transports[r]->connector(p)->posted) {
        (e[0] == 'S' ? sends : recvs).push_back(e);
      }
      for (const Action& a : schedules[r].steps[0].actions) {
        if (a.peer != p) continue;
        if (a.kind == ActionKind::kSend) {
          wantSends.push_back("S" + std::to_string(a.src.bytes) + "@" +
                              std::to_string(long(send[r].data() + a.src.offset)));
        } else {
          wantRecvs.push_back("R" + std::to_string(a.dst.bytes) + "@" +
                              std::to_string(long(recv[r].data() + a.dst.offset)));
        }
      }
      EXPECT_EQ(sends, wantSends) << "rank " << r << " to " << p;
      EXPECT_EQ(recvs, wantRecvs) << "rank " << r << " from " << p;
    }
    // Data: piece m of block `from` holds bytes sender `from` sent from its block r.
    for (int from = 0; from < n; ++from) {
      for (size_t m = 0; m < messages; ++m) {
        for (size_t i = 0; i < l.pieceOffset(m + 1) - l.pieceOffset(m); ++i) {
          const size_t at = l.pieceOffset(m) + i;
          const uint8_t want =
              from == r || i >= m % 5 ? 0xEE : sendByte(from, r * l.blockBytes() + at);
          ASSERT_EQ(recv[r][from * l.blockBytes() + at], want)
              << "rank " << r << " block " << from << " byte " << at;
        }
      }
    }
  }
}

TEST(ScheduleRunnerTest, ManyTransfersKeepFifoOrderAndLandInPlace) {
  for (int n : {2, 3, 5}) {
    for (size_t messages : {size_t(1), size_t(7), size_t(300)}) {
      for (bool holdBack : {false, true}) {
        for (bool reverse : {false, true}) {
          checkManyTransfers(n, messages, holdBack && messages > 2, reverse);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// Local copies chained by `after`, then a transfer step: each copy reads what the
// previous one wrote, so any start out of order leaves a wrong byte.
TEST(ScheduleRunnerTest, ChainedCopiesRunInDependencyOrder) {
  constexpr size_t kLinks = 200;
  Schedule s;
  s.algorithm = "chain";
  s.steps.emplace_back();
  // Action k copies recv byte k - 1 (the send buffer's byte 0 for k = 0) to byte k.
  // Listed in reverse, so every action waits on one listed after it.
  for (size_t k = kLinks; k-- > 0;) {
    Action a;
    a.kind = ActionKind::kCopy;
    a.dst = Span{BufferId::kRecv, k, 1};
    a.src = k == 0 ? Span{BufferId::kSend, 0, 1} : Span{BufferId::kRecv, k - 1, 1};
    a.after = k == 0 ? -1 : static_cast<int>(kLinks - k);
    s.steps[0].actions.push_back(a);
  }
  std::vector<uint8_t> send{42}, recv(kLinks, 0);
  Buffers b{send.data(), recv.data(), nullptr, send.size(), recv.size(), 0};
  ScheduleRunner runner(nullptr, &s, b, braidUint8, braidSum, 1);
  bool progressed = false;
  for (size_t poll = 0; poll < 2 * kLinks && !runner.done(); ++poll) {
    ASSERT_TRUE(runner.progress(&progressed).isOk());
  }
  ASSERT_TRUE(runner.done());
  EXPECT_EQ(recv, std::vector<uint8_t>(kLinks, 42));
}

// Rank 1 never runs: rank 0's sends finish (the fake buffers them) but its receives
// wait, so the timeout names rank 1 as the peer being received from.
TEST(ScheduleRunnerTest, StalledPeerIsNamedAndRestartRunsAgain) {
  const Layout l{2, 40};
  const size_t bytes = l.blockBytes() * 2;
  Wires wires(2);
  FakeTransport t0(0, &wires, false), t1(1, &wires, false);
  Schedule s0 = manyTransfers(l, 0, false), s1 = manyTransfers(l, 1, false);
  std::vector<uint8_t> send0(bytes, 1), send1(bytes, 2), recv0(bytes), recv1(bytes);
  ScheduleRunner r0(&t0, &s0, Buffers{send0.data(), recv0.data(), nullptr, bytes, bytes, 0},
                    braidUint8, braidSum, 2);
  ScheduleRunner r1(&t1, &s1, Buffers{send1.data(), recv1.data(), nullptr, bytes, bytes, 0},
                    braidUint8, braidSum, 2);
  bool progressed = false;
  for (int poll = 0; poll < 200; ++poll) ASSERT_TRUE(r0.progress(&progressed).isOk());
  ASSERT_FALSE(r0.done());
  bool receiving = false;
  EXPECT_EQ(r0.pendingPeer(&receiving), 1);
  EXPECT_TRUE(receiving);
  const std::string pending = r0.describePending();
  EXPECT_NE(pending.find("many step 1/1"), std::string::npos) << pending;
  EXPECT_NE(pending.find("recv from rank 1"), std::string::npos) << pending;
  EXPECT_EQ(pending.find("send to rank 1"), std::string::npos) << pending;

  for (int poll = 0; poll < 1000 && !(r0.done() && r1.done()); ++poll) {
    ASSERT_TRUE(r0.progress(&progressed).isOk());
    ASSERT_TRUE(r1.progress(&progressed).isOk());
  }
  ASSERT_TRUE(r0.done() && r1.done());
  EXPECT_EQ(r0.pendingPeer(&receiving), -1);
  EXPECT_EQ(r0.describePending(), "nothing");

  // Again, over fresh buffers holding other values.
  std::vector<uint8_t> again0(bytes, 7), again1(bytes, 9), out0(bytes), out1(bytes);
  r0.restart(Buffers{again0.data(), out0.data(), nullptr, bytes, bytes, 0});
  r1.restart(Buffers{again1.data(), out1.data(), nullptr, bytes, bytes, 0});
  for (int poll = 0; poll < 1000 && !(r0.done() && r1.done()); ++poll) {
    ASSERT_TRUE(r0.progress(&progressed).isOk());
    ASSERT_TRUE(r1.progress(&progressed).isOk());
  }
  ASSERT_TRUE(r0.done() && r1.done());
  // Rank 0's block 1 holds what rank 1 sent in the second run (its pieces of value 9).
  EXPECT_EQ(out0[l.blockBytes() + l.pieceOffset(1)], 9);
  EXPECT_EQ(out1[l.pieceOffset(1)], 7);
}

// Rank r: one step of `messages` sends and receives of `piece` bytes each, then a
// copy of `copyBytes` (its own block) that starts with the step, after the transfers.
Schedule exchangeAndCopy(int r, size_t messages, size_t piece, size_t copyBytes) {
  Schedule s;
  s.algorithm = "exchange-and-copy";
  s.steps.emplace_back();
  std::vector<Action>& actions = s.steps[0].actions;
  const int peer = 1 - r;
  for (size_t m = 0; m < messages; ++m) {
    actions.push_back(transfer(ActionKind::kSend, peer, m * piece, piece));
    actions.push_back(transfer(ActionKind::kRecv, peer, m * piece, piece));
  }
  Action copy;
  copy.kind = ActionKind::kCopy;
  copy.src = Span{BufferId::kSend, messages * piece, copyBytes};
  copy.dst = Span{BufferId::kRecv, messages * piece, copyBytes};
  actions.push_back(copy);
  return s;
}

TEST(ScheduleRunnerTest, LongCopyPumpsConnectorsBetweenPieces) {
  constexpr size_t kMessages = 40, kPiece = 24;
  // Not a whole number of pieces: the last piece is short.
  const size_t copyBytes = 5 * ScheduleRunner::kCopyPieceBytes + 77;
  const size_t pieces = 6;
  const size_t bytes = kMessages * kPiece + copyBytes;
  Wires wires(2);
  FakeTransport t0(0, &wires, false), t1(1, &wires, false);
  Schedule s0 = exchangeAndCopy(0, kMessages, kPiece, copyBytes);
  Schedule s1 = exchangeAndCopy(1, kMessages, kPiece, copyBytes);
  std::vector<std::vector<uint8_t>> send(2, std::vector<uint8_t>(bytes));
  std::vector<std::vector<uint8_t>> recv(2, std::vector<uint8_t>(bytes, 0xEE));
  for (int r = 0; r < 2; ++r) {
    for (size_t i = 0; i < bytes; ++i) send[r][i] = sendByte(r, i);
  }
  ScheduleRunner r0(&t0, &s0, Buffers{send[0].data(), recv[0].data(), nullptr, bytes, bytes, 0},
                    braidUint8, braidSum, 2);
  ScheduleRunner r1(&t1, &s1, Buffers{send[1].data(), recv[1].data(), nullptr, bytes, bytes, 0},
                    braidUint8, braidSum, 2);
  // Rank 1 first: its sends are on the wire when rank 0's copy runs.
  bool progressed = false;
  ASSERT_TRUE(r1.progress(&progressed).isOk());
  ASSERT_TRUE(r0.progress(&progressed).isOk());
  // One call entered the step and ran the whole copy: the fake connector (one send
  // and one receive per poll) was pumped between every two pieces, then once more.
  EXPECT_EQ(t0.connector(1)->polls, pieces);
  for (int poll = 0; poll < 1000 && !(r0.done() && r1.done()); ++poll) {
    ASSERT_TRUE(r0.progress(&progressed).isOk());
    ASSERT_TRUE(r1.progress(&progressed).isOk());
  }
  ASSERT_TRUE(r0.done() && r1.done());
  for (int r = 0; r < 2; ++r) {
    for (size_t i = 0; i < bytes; ++i) {
      // The exchanged part comes from the peer, the copied part from this rank.
      const uint8_t want = sendByte(i < kMessages * kPiece ? 1 - r : r, i);
      ASSERT_EQ(recv[r][i], want) << "rank " << r << " byte " << i;
    }
  }
}

// All-to-all-v where rank 0 sends itself 3 elements but expects 4.
TEST(ScheduleRunnerTest, OwnCountsThatDifferAreAnError) {
  CollArgs args;
  args.kind = CollKind::kAllToAllv;
  args.type = braidInt32;
  args.nranks = 2;
  args.sendCounts = {3, 2};
  args.sendDispls = {0, 3};
  args.recvCounts = {4, 2};
  args.recvDispls = {0, 4};
  Result<Schedule> s = buildSchedule(args, "pairwise");
  ASSERT_TRUE(s.isOk()) << s.status().message();
  Wires wires(2);
  FakeTransport t(0, &wires, false);
  std::vector<uint8_t> send(20, 1), recv(24, 0);
  ScheduleRunner runner(&t, &*s, Buffers{send.data(), recv.data(), nullptr, 20, 24, 0}, braidInt32,
                        braidSum, 2);
  bool progressed = false;
  Status status = runner.progress(&progressed);
  EXPECT_EQ(status.code(), braidInvalidUsage) << status.message();
  EXPECT_NE(status.message().find("12 bytes into a span of 16"), std::string::npos)
      << status.message();
  EXPECT_EQ(std::vector<uint8_t>(recv.begin(), recv.begin() + 16), std::vector<uint8_t>(16, 0));
}

// Two ranks each send a block (from the send buffer, then from scratch) and a plain message.
TEST(ScheduleRunnerTest, BlockSendsTellTheConnectorTheirBufferSize) {
  Wires wires(2);
  std::vector<std::unique_ptr<FakeTransport>> transports;
  std::vector<Schedule> schedules(2);
  std::vector<std::vector<uint8_t>> send(2), recv(2, std::vector<uint8_t>(90, 0xEE)),
      scratch(2, std::vector<uint8_t>(40));
  std::vector<std::unique_ptr<ScheduleRunner>> runners;
  for (int r = 0; r < 2; ++r) {
    for (int i = 0; i < 300; ++i) send[r].push_back(sendByte(r, i));
    for (int i = 0; i < 40; ++i) scratch[r][i] = sendByte(r + 2, i);
    Action block = transfer(ActionKind::kSend, 1 - r, 100, 30);
    block.block = true;
    Action scratchBlock = block;
    scratchBlock.src = Span{BufferId::kScratch, 0, 40};
    Action plain = transfer(ActionKind::kSend, 1 - r, 0, 20);
    schedules[r].algorithm = "blocks";
    schedules[r].steps.push_back(Step{
        {block, scratchBlock, plain, transfer(ActionKind::kRecv, 1 - r, 0, 30),
         transfer(ActionKind::kRecv, 1 - r, 30, 40), transfer(ActionKind::kRecv, 1 - r, 70, 20)}});
    transports.push_back(std::make_unique<FakeTransport>(r, &wires, false));
  }
  for (int r = 0; r < 2; ++r) {
    Buffers b{send[r].data(), recv[r].data(), scratch[r].data(), 300, 90, 40};
    runners.push_back(std::make_unique<ScheduleRunner>(transports[r].get(), &schedules[r], b,
                                                       braidUint8, braidSum, 2));
  }
  runAll(runners);
  if (HasFatalFailure()) return;
  for (int r = 0; r < 2; ++r) {
    FakeConnector* c = transports[r]->connector(1 - r);
    EXPECT_EQ(c->blockSends, (std::vector<std::string>{"30/300", "40/40"})) << "rank " << r;
    EXPECT_EQ(c->posted.size(), 6u) << "rank " << r;
    for (int i = 0; i < 90; ++i) {
      const uint8_t want = i < 30   ? sendByte(1 - r, 100 + i)
                           : i < 70 ? sendByte(1 - r + 2, i - 30)
                                    : sendByte(1 - r, i - 70);
      ASSERT_EQ(recv[r][i], want) << "rank " << r << " byte " << i;
    }
  }
}

}  // namespace
}  // namespace braid::coll
