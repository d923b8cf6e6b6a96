// Posting the next step ahead (Transport::postsAhead, collectives/host/schedule_runner.h)
// over an in-process fake transport whose connectors read a send's bytes and write a
// receive's only when they move them, as a real transport may, so a step posted ahead
// that touches the current step's bytes would deliver stale data.
//
// 1. Ring all-gather and ring all-reduce (2 and 3 ranks, several chunks, in place and
//    not): the results match a reference computed here, and with postsAhead every
//    connector held two sends at once (the next chunk queued behind the current one),
//    where without it never more than one.
// 2. A rank that forwards in step 1 what it receives in step 0 (read after write), and
//    the same in place (send and recv the same memory, named by different buffers):
//    step 1 is not posted ahead, the forwarded bytes are the received ones.
// 3. A rank that receives in step 1 into the bytes it sends in step 0 (write after
//    read): not posted ahead, the peer gets the bytes from before the receive.
// 4. A step with a local action is never posted ahead.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "collectives/algorithms/builders.h"
#include "collectives/host/schedule_runner.h"

namespace braid::coll {
namespace {

using transport::Request;

// A message on the wire, and the sender's request: done once the receiver took it (as
// a write completes only once it landed), so sends queue while the receiver lags.
struct Message {
  std::vector<uint8_t> data;
  Request* sent;
  size_t* senderUnfinished;  // the sending connector's count of sends not done
};

struct Wires {
  explicit Wires(int n) : queues(n * n), n(n) {}
  std::deque<Message>& from(int a, int b) { return queues[a * n + b]; }
  std::vector<std::deque<Message>> queues;
  int n;
};

// Moves at most one send and one receive per progress() call. recvFirst: a call
// delivers a receive before it reads a send (else the other way round), so each
// hazard test can pick the order that would expose it.
class AheadConnector : public transport::Connector {
 public:
  AheadConnector(int self, int peer, Wires* wires, bool recvFirst)
      : self_(self), peer_(peer), wires_(wires), recvFirst_(recvFirst) {}
  int peer() const override { return peer_; }
  Status postSend(const void* src, size_t bytes, Request* req) override {
    *req = Request{bytes, 0, false};
    sends_.push_back({static_cast<const uint8_t*>(src), nullptr, req, {}});
    maxSends = std::max(maxSends, ++unfinished_);
    return Status::ok();
  }
  Status postRecv(const transport::RecvSink& sink, size_t bytes, Request* req) override {
    *req = Request{bytes, 0, false};
    recvs_.push_back({nullptr, sink.dst, req, sink});
    return Status::ok();
  }
  Status progress(bool* progressed) override {
    *progressed = false;
    if (recvFirst_) BRAID_RETURN_IF_ERROR(deliver(progressed));
    if (!sends_.empty()) {
      const Pending s = sends_.front();
      sends_.pop_front();
      wires_->from(self_, peer_)
          .push_back(
              Message{std::vector<uint8_t>(s.src, s.src + s.req->bytes), s.req, &unfinished_});
      *progressed = true;
    }
    if (!recvFirst_) BRAID_RETURN_IF_ERROR(deliver(progressed));
    return Status::ok();
  }
  size_t maxSends = 0;  // the most sends posted and not yet done at once

 private:
  struct Pending {
    const uint8_t* src;
    uint8_t* dst;
    Request* req;
    transport::RecvSink sink;
  };
  Status deliver(bool* progressed) {
    auto& inbound = wires_->from(peer_, self_);
    if (recvs_.empty() || inbound.empty()) return Status::ok();
    const Pending r = recvs_.front();
    recvs_.pop_front();
    const std::vector<uint8_t> data = std::move(inbound.front().data);
    Request* sent = inbound.front().sent;
    --*inbound.front().senderUnfinished;
    inbound.pop_front();
    sent->completed = sent->bytes;
    sent->done = true;
    if (data.size() != r.req->bytes) return invalidUsage("message size mismatch");
    if (r.sink.reduce != nullptr) {
      r.sink.reduce(r.dst, r.sink.accum, data.data(), data.size() / r.sink.elemSize);
    } else if (!data.empty()) {
      std::memcpy(r.dst, data.data(), data.size());
    }
    r.req->completed = r.req->bytes;
    r.req->done = *progressed = true;
    return Status::ok();
  }
  const int self_, peer_;
  Wires* const wires_;
  const bool recvFirst_;
  std::deque<Pending> sends_, recvs_;
  size_t unfinished_ = 0;  // sends posted and not done
};

class AheadTransport : public transport::Transport {
 public:
  AheadTransport(int self, Wires* wires, bool ahead, bool recvFirst) : ahead_(ahead) {
    for (int p = 0; p < wires->n; ++p) {
      connectors_.push_back(std::make_unique<AheadConnector>(self, p, wires, recvFirst));
    }
  }
  const char* name() const override { return "fake"; }
  AheadConnector* connector(int peer) override { return connectors_[peer].get(); }
  bool postsAhead() const override { return ahead_; }
  Status waitForActivity(const Deadline&, int) override { return Status::ok(); }
  void abort(const Status&) override {}

 private:
  const bool ahead_;
  std::vector<std::unique_ptr<AheadConnector>> connectors_;
};

void runAll(std::vector<std::unique_ptr<ScheduleRunner>>& runners) {
  for (size_t idle = 0; idle < 1000;) {
    bool all = true, moved = false;
    for (auto& runner : runners) {
      bool progressed = false;
      const Status s = runner->progress(&progressed);
      ASSERT_TRUE(s.isOk()) << s.message();
      moved |= progressed;
      all &= runner->done();
    }
    if (all) return;
    idle = moved ? 0 : idle + 1;
  }
  FAIL() << "the runners stopped moving: " << runners[0]->describePending();
}

// Per-rank schedules and buffers, run over fresh transports; maxSends: each rank's most
// sends queued on one connector at once.
struct Ranks {
  Ranks(int n, bool ahead, bool recvFirst = false) : n(n), ahead(ahead), recvFirst(recvFirst) {}
  int n;
  bool ahead;
  bool recvFirst;
  bool inPlace = false;
  std::vector<size_t> inPlaceAt;  // in place: where each rank's input lies in its recv
  std::vector<Schedule> schedules;
  std::vector<std::vector<uint8_t>> send, recv;
  std::vector<size_t> maxSends;

  // Rank r's float input valueOf(r, i), its schedule for `kind` (64-byte chunks: several
  // per block), and a recv of `recvCount` floats with the input at element `at` in place.
  template <typename Build>
  void add(CollKind kind, Build build, int r, size_t count, size_t recvCount, size_t at);

  void go(braidDataType_t type, braidRedOp_t op) {
    Wires wires(n);
    std::vector<std::unique_ptr<AheadTransport>> transports;
    std::vector<std::unique_ptr<ScheduleRunner>> runners;
    for (int r = 0; r < n; ++r) {
      transports.push_back(std::make_unique<AheadTransport>(r, &wires, ahead, recvFirst));
      const size_t at = inPlaceAt.empty() ? 0 : inPlaceAt[r];
      const uint8_t* in = inPlace ? recv[r].data() + at : send[r].data();
      const size_t inBytes = inPlace ? recv[r].size() - at : send[r].size();
      Buffers b{in, recv[r].data(), nullptr, inBytes, recv[r].size(), 0};
      runners.push_back(
          std::make_unique<ScheduleRunner>(transports[r].get(), &schedules[r], b, type, op, n));
    }
    runAll(runners);
    maxSends.assign(n, 0);
    for (int r = 0; r < n; ++r) {
      for (int p = 0; p < n; ++p) {
        maxSends[r] = std::max(maxSends[r], transports[r]->connector(p)->maxSends);
      }
    }
  }
};

float valueOf(int rank, size_t i) { return static_cast<float>((rank + 1) * 1000 + i % 997); }

template <typename Build>
void Ranks::add(CollKind kind, Build build, int r, size_t count, size_t recvCount, size_t at) {
  CollArgs args;
  args.kind = kind;
  args.count = count;
  args.rank = r;
  args.nranks = n;
  args.inPlace = inPlace;
  args.chunkBytes = 64;
  schedules.push_back(build(args));
  std::vector<float> mine(count);
  for (size_t i = 0; i < count; ++i) mine[i] = valueOf(r, i);
  const size_t bytes = count * sizeof(float);
  send.emplace_back(bytes);
  std::memcpy(send[r].data(), mine.data(), bytes);
  recv.emplace_back(recvCount * sizeof(float), 0xEE);
  if (inPlace) std::memcpy(recv[r].data() + at * sizeof(float), mine.data(), bytes);
  inPlaceAt.push_back(at * sizeof(float));
}

void checkAllGather(int n, size_t count, bool inPlace, bool ahead) {
  SCOPED_TRACE("all-gather n=" + std::to_string(n) + (inPlace ? " in place" : "") +
               (ahead ? " ahead" : ""));
  Ranks run(n, ahead);
  run.inPlace = inPlace;
  const size_t bytes = count * sizeof(float);
  for (int r = 0; r < n; ++r) {
    run.add(CollKind::kAllGather, buildRingAllGather, r, count, count * n, r * count);
  }
  run.go(braidFloat32, braidSum);
  if (::testing::Test::HasFatalFailure()) return;
  for (int r = 0; r < n; ++r) {
    std::vector<float> got(count * n);
    std::memcpy(got.data(), run.recv[r].data(), bytes * n);
    for (int b = 0; b < n; ++b) {
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(got[b * count + i], valueOf(b, i)) << "rank " << r << " block " << b << " " << i;
      }
    }
    EXPECT_EQ(run.maxSends[r], ahead ? 2u : 1u) << "rank " << r;
  }
}

void checkAllReduce(int n, size_t count, bool inPlace, bool ahead) {
  SCOPED_TRACE("all-reduce n=" + std::to_string(n) + (inPlace ? " in place" : "") +
               (ahead ? " ahead" : ""));
  Ranks run(n, ahead);
  run.inPlace = inPlace;
  const size_t bytes = count * sizeof(float);
  for (int r = 0; r < n; ++r) run.add(CollKind::kAllReduce, buildRingAllReduce, r, count, count, 0);
  run.go(braidFloat32, braidSum);
  if (::testing::Test::HasFatalFailure()) return;
  for (int r = 0; r < n; ++r) {
    std::vector<float> got(count);
    std::memcpy(got.data(), run.recv[r].data(), bytes);
    for (size_t i = 0; i < count; ++i) {
      float want = 0;
      for (int k = 0; k < n; ++k) want += valueOf(k, i);  // exact: small integers
      ASSERT_EQ(got[i], want) << "rank " << r << " element " << i;
    }
    EXPECT_EQ(run.maxSends[r], ahead ? 2u : 1u) << "rank " << r;
  }
}

TEST(PostAheadTest, RingAllGatherQueuesTheNextChunkAndGathersRight) {
  for (int n : {2, 3}) {
    for (bool inPlace : {false, true}) {
      for (bool ahead : {true, false}) checkAllGather(n, 100, inPlace, ahead);
    }
  }
}

TEST(PostAheadTest, RingAllReduceQueuesTheNextChunkAndReducesRight) {
  for (int n : {2, 3}) {
    for (bool inPlace : {false, true}) {
      for (bool ahead : {true, false}) checkAllReduce(n, 150, inPlace, ahead);
    }
  }
}

Action act(ActionKind kind, int peer, BufferId buf, size_t offset, size_t bytes) {
  Action a;
  a.kind = kind;
  a.peer = peer;
  (kind == ActionKind::kSend ? a.src : a.dst) = Span{buf, offset, bytes};
  return a;
}

Schedule steps(std::vector<std::vector<Action>> perStep) {
  Schedule s;
  s.algorithm = "hand";
  for (auto& actions : perStep) s.steps.push_back(Step{std::move(actions)});
  return s;
}

constexpr size_t kBytes = 8;

// Rank 1 sends its send buffer to rank 0 and gets it back: rank 0 receives into recv
// and, in step 1, forwards those bytes (named as send in place, else as recv). Rank 0
// is polled first, so a forward posted ahead would be read before the bytes arrive.
void checkForwarding(bool inPlace) {
  SCOPED_TRACE(inPlace ? "in place" : "recv buffer");
  Ranks run(2, /*ahead=*/true);
  run.inPlace = inPlace;
  run.schedules.push_back(
      steps({{act(ActionKind::kRecv, 1, BufferId::kRecv, 0, kBytes)},
             {act(ActionKind::kSend, 1, inPlace ? BufferId::kSend : BufferId::kRecv, 0, kBytes)}}));
  run.schedules.push_back(steps({{act(ActionKind::kSend, 0, BufferId::kSend, 0, kBytes)},
                                 {act(ActionKind::kRecv, 0, BufferId::kRecv, 0, kBytes)}}));
  run.send = {std::vector<uint8_t>(kBytes, 0x11), std::vector<uint8_t>(kBytes, 0x22)};
  run.recv = {std::vector<uint8_t>(kBytes, 0xEE), std::vector<uint8_t>(kBytes, 0xEE)};
  if (inPlace) run.recv[1].assign(kBytes, 0x22);
  run.go(braidUint8, braidSum);
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(run.recv[1], std::vector<uint8_t>(kBytes, 0x22)) << "rank 0 forwarded stale bytes";
  EXPECT_EQ(run.maxSends[0], 1u);
}

TEST(PostAheadTest, AStepReadingWhatTheStepBeforeReceivesWaits) {
  checkForwarding(false);
  checkForwarding(true);
}

TEST(PostAheadTest, AStepReceivingIntoWhatTheStepBeforeSendsWaits) {
  // Rank 0 sends a first message, then recv[0, 8), in step 0 and receives into recv[0, 8)
  // in step 1. Its connector moves one send per poll and delivers a receive before it
  // reads a send, so a receive posted ahead would land before the second send is read.
  Ranks run(2, /*ahead=*/true, /*recvFirst=*/true);
  run.schedules.push_back(steps({{act(ActionKind::kSend, 1, BufferId::kSend, 0, kBytes),
                                  act(ActionKind::kSend, 1, BufferId::kRecv, 0, kBytes)},
                                 {act(ActionKind::kRecv, 1, BufferId::kRecv, 0, kBytes)}}));
  run.schedules.push_back(steps({{act(ActionKind::kRecv, 0, BufferId::kRecv, 0, kBytes),
                                  act(ActionKind::kRecv, 0, BufferId::kRecv, kBytes, kBytes),
                                  act(ActionKind::kSend, 0, BufferId::kSend, 0, kBytes)}}));
  run.send = {std::vector<uint8_t>(kBytes, 0x11), std::vector<uint8_t>(kBytes, 0x22)};
  run.recv = {std::vector<uint8_t>(kBytes, 0x33), std::vector<uint8_t>(2 * kBytes, 0xEE)};
  run.go(braidUint8, braidSum);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_EQ(std::vector<uint8_t>(run.recv[1].begin() + kBytes, run.recv[1].end()),
            std::vector<uint8_t>(kBytes, 0x33))
      << "rank 0 sent bytes its next receive had overwritten";
  EXPECT_EQ(run.recv[0], std::vector<uint8_t>(kBytes, 0x22));
}

TEST(PostAheadTest, AStepWithALocalActionIsNotPostedAhead) {
  // Rank 0: step 0 sends 0..8, step 1 sends 8..16 and copies; disjoint bytes, but a
  // local action runs only when its step is entered.
  Ranks run(2, /*ahead=*/true);
  Action copy;
  copy.kind = ActionKind::kCopy;
  copy.src = Span{BufferId::kSend, 16, kBytes};
  copy.dst = Span{BufferId::kRecv, 16, kBytes};
  run.schedules.push_back(steps({{act(ActionKind::kSend, 1, BufferId::kSend, 0, kBytes)},
                                 {act(ActionKind::kSend, 1, BufferId::kSend, 8, kBytes), copy}}));
  run.schedules.push_back(steps({{act(ActionKind::kRecv, 0, BufferId::kRecv, 0, kBytes)},
                                 {act(ActionKind::kRecv, 0, BufferId::kRecv, 8, kBytes)}}));
  run.send = {std::vector<uint8_t>(3 * kBytes, 0x11), std::vector<uint8_t>(3 * kBytes, 0)};
  run.recv = {std::vector<uint8_t>(3 * kBytes, 0xEE), std::vector<uint8_t>(3 * kBytes, 0xEE)};
  run.go(braidUint8, braidSum);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_EQ(run.maxSends[0], 1u);
  EXPECT_EQ(std::vector<uint8_t>(run.recv[1].begin(), run.recv[1].begin() + 2 * kBytes),
            std::vector<uint8_t>(2 * kBytes, 0x11));
  EXPECT_EQ(run.recv[0][16], 0x11);
}

}  // namespace
}  // namespace braid::coll
