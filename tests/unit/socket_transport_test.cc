// Socket transport tests: N ranks as N threads of this process over a
// LocalBootstrapGroup, talking real TCP (loopback or the host's interface).
#include "transports/socket/socket_transport.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "core/config.h"
#include "core/kernels/reduce.h"
#include "core/net/socket_util.h"
#include "support/local_bootstrap.h"
#include "support/socket_ranks.h"
#include "transports/socket/socket_connector.h"
#include "transports/socket/socket_setup.h"
#include "transports/socket/socket_wire.h"

namespace braid::transport {
namespace {

using testing::driveRequests;
using testing::expectAllOk;
using testing::LocalBootstrapGroup;
using testing::runRanks;
using testing::socketConfig;

// A byte pattern unique to (seed, index), so misplaced bytes are caught.
std::vector<uint8_t> pattern(size_t bytes, uint32_t seed) {
  std::vector<uint8_t> v(bytes);
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (size_t i = 0; i < bytes; i += sizeof(x)) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
    std::memcpy(v.data() + i, &x, std::min(sizeof(x), bytes - i));
  }
  return v;
}

RecvSink copyTo(void* dst) { return RecvSink{static_cast<uint8_t*>(dst)}; }

struct PingPongCase {
  int streams;
  size_t bytes;
};

class SocketPingPong : public ::testing::TestWithParam<PingPongCase> {};

TEST_P(SocketPingPong, EchoesAndExchanges) {
  const auto [streams, bytes] = GetParam();
  auto results = runRanks(2, [&](int rank, Bootstrap& b) -> Status {
    BRAID_ASSIGN_OR_RETURN(auto t, createSocketTransport(b, socketConfig(streams)));
    Connector* peer = t->connector(1 - rank);
    const std::vector<uint8_t> ping = pattern(bytes, 1), pong = pattern(bytes, 2);
    std::vector<uint8_t> got(bytes + 1, 0xEE);  // one guard byte past the end
    Request send, recv;
    // Ping-pong: rank 0 sends, rank 1 answers after receiving.
    if (rank == 0) {
      BRAID_RETURN_IF_ERROR(peer->postSend(ping.data(), bytes, &send));
      BRAID_RETURN_IF_ERROR(peer->postRecv(copyTo(got.data()), bytes, &recv));
      BRAID_RETURN_IF_ERROR(driveRequests(*t, 2, {&send, &recv}));
      if (!std::equal(pong.begin(), pong.end(), got.begin())) return internalError("bad pong");
    } else {
      BRAID_RETURN_IF_ERROR(peer->postRecv(copyTo(got.data()), bytes, &recv));
      BRAID_RETURN_IF_ERROR(driveRequests(*t, 2, {&recv}));
      if (!std::equal(ping.begin(), ping.end(), got.begin())) return internalError("bad ping");
      BRAID_RETURN_IF_ERROR(peer->postSend(pong.data(), bytes, &send));
      BRAID_RETURN_IF_ERROR(driveRequests(*t, 2, {&send}));
    }
    if (got[bytes] != 0xEE) return internalError("wrote past the end of the receive buffer");
    if (recv.completed != bytes || send.completed != bytes) return internalError("bad counts");
    // Exchange: both send and receive at once (full-duplex, no deadlock).
    const std::vector<uint8_t> mine = pattern(bytes, 10 + rank);
    const std::vector<uint8_t> theirs = pattern(bytes, 11 - rank);
    BRAID_RETURN_IF_ERROR(peer->postSend(mine.data(), bytes, &send));
    BRAID_RETURN_IF_ERROR(peer->postRecv(copyTo(got.data()), bytes, &recv));
    BRAID_RETURN_IF_ERROR(driveRequests(*t, 2, {&send, &recv}));
    if (!std::equal(theirs.begin(), theirs.end(), got.begin())) {
      return internalError("bad exchange");
    }
    return Status::ok();
  });
  expectAllOk(results);
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, SocketPingPong,
    ::testing::Values(PingPongCase{1, 0}, PingPongCase{1, 1}, PingPongCase{1, 7},
                      PingPongCase{1, (1 << 20) + 3}, PingPongCase{1, 16 << 20}, PingPongCase{4, 0},
                      PingPongCase{4, 1}, PingPongCase{4, 7}, PingPongCase{4, (1 << 20) + 3},
                      PingPongCase{4, 16 << 20}, PingPongCase{0, (1 << 20) + 3}),
    [](const auto& info) {
      return "streams" + std::to_string(info.param.streams) + "_bytes" +
             std::to_string(info.param.bytes);
    });

// Varied sizes, all sends posted at once, receives posted in batches while
// data is already arriving (streams stall, then resume), order preserved.
TEST(SocketTransport, ManyMessagesArriveInOrder) {
  constexpr int kMessages = 300;
  auto sizeOf = [](int i) -> size_t { return i % 7 == 0 ? 0 : (i * 7919) % (700 << 10); };
  auto results = runRanks(2, [&](int rank, Bootstrap& b) -> Status {
    BRAID_ASSIGN_OR_RETURN(auto t, createSocketTransport(b, socketConfig(3)));
    Connector* peer = t->connector(1 - rank);
    std::vector<Request> reqs(kMessages);
    std::vector<std::vector<uint8_t>> bufs(kMessages);
    if (rank == 0) {
      std::vector<const Request*> all;
      for (int i = 0; i < kMessages; ++i) {
        bufs[i] = pattern(sizeOf(i), 100 + i);
        BRAID_RETURN_IF_ERROR(peer->postSend(bufs[i].data(), bufs[i].size(), &reqs[i]));
        all.push_back(&reqs[i]);
      }
      return driveRequests(*t, 2, all);
    }
    for (int batch = 0; batch < kMessages; batch += 50) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      std::vector<const Request*> some;
      for (int i = batch; i < batch + 50; ++i) {
        bufs[i].assign(sizeOf(i), 0);
        BRAID_RETURN_IF_ERROR(peer->postRecv(copyTo(bufs[i].data()), bufs[i].size(), &reqs[i]));
        some.push_back(&reqs[i]);
      }
      BRAID_RETURN_IF_ERROR(driveRequests(*t, 2, some));
    }
    for (int i = 0; i < kMessages; ++i) {
      if (bufs[i] != pattern(sizeOf(i), 100 + i)) {
        return internalError("message " + std::to_string(i) + " corrupted or out of order");
      }
    }
    return Status::ok();
  });
  expectAllOk(results);
}

// recv-reduce: dst = accum + incoming, through the staging buffer, with
// accum aliasing dst and separate. Integer-valued floats make sums exact.
TEST(SocketTransport, FusedReceiveReduceSumsFloat32) {
  coll::ReduceFn sum = coll::reducerFor(braidFloat32, braidSum);
  ASSERT_NE(sum, nullptr);
  for (int streams : {1, 4}) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{5}, size_t{(1 << 20) + 3}}) {
      auto results = runRanks(2, [&](int rank, Bootstrap& b) -> Status {
        BRAID_ASSIGN_OR_RETURN(auto t, createSocketTransport(b, socketConfig(streams)));
        Connector* peer = t->connector(1 - rank);
        auto value = [](int who, size_t i) { return static_cast<float>((i * 31 + who) % 1000); };
        std::vector<float> mine(count), accum(count), inPlace(count), out(count);
        for (size_t i = 0; i < count; ++i) {
          mine[i] = value(rank, i);
          accum[i] = 1000.0f * static_cast<float>(i % 7);
          inPlace[i] = accum[i];
        }
        const size_t bytes = count * sizeof(float);
        Request s1, s2, r1, r2;
        RecvSink aliased{reinterpret_cast<uint8_t*>(inPlace.data()),
                         reinterpret_cast<const uint8_t*>(inPlace.data()), sum, sizeof(float)};
        RecvSink separate{reinterpret_cast<uint8_t*>(out.data()),
                          reinterpret_cast<const uint8_t*>(accum.data()), sum, sizeof(float)};
        BRAID_RETURN_IF_ERROR(peer->postSend(mine.data(), bytes, &s1));
        BRAID_RETURN_IF_ERROR(peer->postSend(mine.data(), bytes, &s2));
        BRAID_RETURN_IF_ERROR(peer->postRecv(aliased, bytes, &r1));
        BRAID_RETURN_IF_ERROR(peer->postRecv(separate, bytes, &r2));
        BRAID_RETURN_IF_ERROR(driveRequests(*t, 2, {&s1, &s2, &r1, &r2}));
        for (size_t i = 0; i < count; ++i) {
          float want = accum[i] + value(1 - rank, i);
          if (inPlace[i] != want || out[i] != want) {
            return internalError("element " + std::to_string(i) + " wrong");
          }
        }
        return Status::ok();
      });
      SCOPED_TRACE("streams " + std::to_string(streams) + " count " + std::to_string(count));
      expectAllOk(results);
    }
  }
}

TEST(SocketTransport, AllToAllAmongSixRanks) {
  constexpr int kRanks = 6;
  auto bytesFor = [](int from, int to) -> size_t { return (300 << 10) + 97 * from + to; };
  auto results = runRanks(kRanks, [&](int rank, Bootstrap& b) -> Status {
    BRAID_ASSIGN_OR_RETURN(auto t, createSocketTransport(b, socketConfig(2)));
    std::vector<std::vector<uint8_t>> out(kRanks), in(kRanks);
    std::vector<Request> sends(kRanks), recvs(kRanks);
    std::vector<const Request*> all;
    for (int p = 0; p < kRanks; ++p) {
      if (p == rank) continue;
      out[p] = pattern(bytesFor(rank, p), rank * 100 + p);
      in[p].assign(bytesFor(p, rank), 0);
      BRAID_RETURN_IF_ERROR(t->connector(p)->postSend(out[p].data(), out[p].size(), &sends[p]));
      BRAID_RETURN_IF_ERROR(
          t->connector(p)->postRecv(copyTo(in[p].data()), in[p].size(), &recvs[p]));
      all.push_back(&sends[p]);
      all.push_back(&recvs[p]);
    }
    BRAID_RETURN_IF_ERROR(driveRequests(*t, kRanks, all));
    for (int p = 0; p < kRanks; ++p) {
      if (p != rank && in[p] != pattern(bytesFor(p, rank), p * 100 + rank)) {
        return internalError("data from rank " + std::to_string(p) + " is wrong");
      }
    }
    return Status::ok();
  });
  expectAllOk(results);
}

TEST(SocketTransport, SizeMismatchIsInvalidUsageNamingThePeer) {
  auto results = runRanks(2, [&](int rank, Bootstrap& b) -> Status {
    BRAID_ASSIGN_OR_RETURN(auto t, createSocketTransport(b, socketConfig(2)));
    std::vector<uint8_t> buf(100);
    Request req;
    Status st = rank == 0 ? t->connector(1)->postSend(buf.data(), 100, &req)
                          : t->connector(0)->postRecv(copyTo(buf.data()), 64, &req);
    if (st.isOk()) st = driveRequests(*t, 2, {&req});
    BRAID_RETURN_IF_ERROR(b.barrier());  // keep both ends open until both are done
    return st;
  });
  EXPECT_TRUE(results[0].isOk()) << results[0].message();
  EXPECT_EQ(results[1].code(), braidInvalidUsage) << results[1].message();
  EXPECT_EQ(results[1].peer(), 0);
  EXPECT_NE(results[1].message().find("rank 0"), std::string::npos) << results[1].message();
  EXPECT_NE(results[1].message().find("100 bytes"), std::string::npos) << results[1].message();
}

// Wraps a rank's bootstrap; after the address exchange it opens stray
// connections to `target`: one presenting a wrong secret, one that never
// speaks. Both must be closed by the target while real setup succeeds.
class StrayInjectingBootstrap : public Bootstrap {
 public:
  StrayInjectingBootstrap(Bootstrap& inner, int target) : inner_(inner), target_(target) {}
  int rank() const override { return inner_.rank(); }
  int nranks() const override { return inner_.nranks(); }
  const std::string& commTag() const override { return inner_.commTag(); }
  const uint8_t* secret() const override { return inner_.secret(); }
  std::array<uint8_t, 32> deriveKey(std::string_view purpose) const override {
    return inner_.deriveKey(purpose);
  }
  Status barrier() override { return inner_.barrier(); }
  double timeoutSeconds() const override { return inner_.timeoutSeconds(); }
  Status allGather(void* data, size_t bytes) override {
    BRAID_RETURN_IF_ERROR(inner_.allGather(data, bytes));
    if (bytes != sizeof(socket::AddressRecord) || !strays_.empty()) return Status::ok();
    const auto& record = static_cast<socket::AddressRecord*>(data)[target_];
    socket::SocketAddress to;
    std::memcpy(&to.storage, record.sockaddrBytes, record.sockaddrLength);
    to.length = record.sockaddrLength;
    socket::Hello forged{};
    forged.magic = socket::kHelloMagic;  // right magic, rank, tag; wrong secret
    forged.tagHash = socket::hashTag(commTag());
    forged.rank = rank();
    forged.streams = 1;
    for (int i = 0; i < 2; ++i) {
      BRAID_ASSIGN_OR_RETURN(socket::Fd fd, socket::connectTo(to, {}, Deadline::in(5)));
      if (i == 0) {
        BRAID_RETURN_IF_ERROR(socket::sendAll(fd.get(), &forged, sizeof(forged), Deadline::in(5)));
      }
      strays_.push_back(std::move(fd));
    }
    return Status::ok();
  }
  // True when the target closed every stray connection.
  bool straysClosed() {
    for (auto& fd : strays_) {
      uint8_t byte;
      Status st = socket::recvAll(fd.get(), &byte, 1, Deadline::in(5));
      if (st.code() != braidRemoteError) return false;  // data or timeout: not closed
    }
    return !strays_.empty();
  }

 private:
  Bootstrap& inner_;
  const int target_;
  std::vector<socket::Fd> strays_;
};

TEST(SocketTransport, StrayConnectionsAreRejectedAndSetupSucceeds) {
  bool closed = false;
  auto results = runRanks(3, [&](int rank, Bootstrap& b) -> Status {
    StrayInjectingBootstrap injecting(b, /*target=*/2);
    Bootstrap& use = rank == 0 ? injecting : b;
    BRAID_ASSIGN_OR_RETURN(auto t, createSocketTransport(use, socketConfig(1)));
    if (rank == 0) closed = injecting.straysClosed();
    uint8_t token = static_cast<uint8_t>(rank), got = 0;
    Request s, r;
    int next = (rank + 1) % 3, prev = (rank + 2) % 3;
    BRAID_RETURN_IF_ERROR(t->connector(next)->postSend(&token, 1, &s));
    BRAID_RETURN_IF_ERROR(t->connector(prev)->postRecv(copyTo(&got), 1, &r));
    BRAID_RETURN_IF_ERROR(driveRequests(*t, 3, {&s, &r}));
    return got == prev ? Status::ok() : internalError("wrong token");
  });
  expectAllOk(results);
  EXPECT_TRUE(closed) << "stray connections were not closed by the target rank";
}

TEST(SocketTransport, AbortWakesLocalWaiterAndPeersNameTheAbortingRank) {
  auto results = runRanks(2, [&](int rank, Bootstrap& b) -> Status {
    BRAID_ASSIGN_OR_RETURN(auto t, createSocketTransport(b, socketConfig(2)));
    std::vector<uint8_t> buf(1 << 20);
    Request req;
    BRAID_RETURN_IF_ERROR(t->connector(1 - rank)->postRecv(copyTo(buf.data()), buf.size(), &req));
    std::thread aborter;
    if (rank == 0) {
      aborter = std::thread([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        t->abort(Status(braidInternalError, "test abort"));
        t->abort(Status(braidInternalError, "second abort is ignored"));
      });
    }
    auto start = std::chrono::steady_clock::now();
    Status st = driveRequests(*t, 2, {&req});
    if (aborter.joinable()) aborter.join();
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(5)) {
      return internalError("abort took too long to be noticed");
    }
    return st;
  });
  EXPECT_EQ(results[0].code(), braidInternalError) << results[0].message();
  EXPECT_NE(results[0].message().find("test abort"), std::string::npos) << results[0].message();
  EXPECT_EQ(results[1].code(), braidRemoteError) << results[1].message();
  EXPECT_EQ(results[1].peer(), 0);
  EXPECT_NE(results[1].message().find("rank 0"), std::string::npos) << results[1].message();
}

// A peer that sends its last message and leaves is not an error for a
// receiver that posts late; a receive the departed peer never sent is.
TEST(SocketTransport, DepartedPeerDeliversWhatItSentThenFails) {
  auto results = runRanks(2, [&](int rank, Bootstrap& b) -> Status {
    BRAID_ASSIGN_OR_RETURN(auto t, createSocketTransport(b, socketConfig(4)));
    const std::vector<uint8_t> data = pattern((1 << 20) + 3, 7);
    Request req;
    if (rank == 0) {
      BRAID_RETURN_IF_ERROR(t->connector(1)->postSend(data.data(), data.size(), &req));
      BRAID_RETURN_IF_ERROR(driveRequests(*t, 2, {&req}));
      BRAID_RETURN_IF_ERROR(b.barrier());
      t.reset();  // closes every stream
      return b.barrier();
    }
    BRAID_RETURN_IF_ERROR(b.barrier());
    BRAID_RETURN_IF_ERROR(b.barrier());  // rank 0 is gone now
    std::vector<uint8_t> got(data.size());
    BRAID_RETURN_IF_ERROR(t->connector(0)->postRecv(copyTo(got.data()), got.size(), &req));
    BRAID_RETURN_IF_ERROR(driveRequests(*t, 2, {&req}));
    if (got != data) return internalError("late receive got wrong data");
    uint8_t extra;
    BRAID_RETURN_IF_ERROR(t->connector(0)->postRecv(copyTo(&extra), 1, &req));
    Status st = driveRequests(*t, 2, {&req});
    if (st.code() != braidRemoteError || st.peer() != 0) {
      return internalError("expected a remote error naming rank 0, got: " + st.message());
    }
    return Status::ok();
  });
  expectAllOk(results);
}

TEST(SocketTransport, LoopbackInterfaceByName) {
  auto nic = socket::selectInterface("lo");
  ASSERT_TRUE(nic.isOk()) << nic.status().message();
  EXPECT_TRUE(nic->address.isLoopback());
  auto results = runRanks(3, [&](int rank, Bootstrap& b) -> Status {
    BRAID_ASSIGN_OR_RETURN(auto t, createSocketTransport(b, socketConfig(2, "lo")));
    std::vector<uint8_t> in(5000);
    const std::vector<uint8_t> out = pattern(5000, rank);
    Request s, r;
    BRAID_RETURN_IF_ERROR(t->connector((rank + 1) % 3)->postSend(out.data(), out.size(), &s));
    BRAID_RETURN_IF_ERROR(t->connector((rank + 2) % 3)->postRecv(copyTo(in.data()), 5000, &r));
    BRAID_RETURN_IF_ERROR(driveRequests(*t, 3, {&s, &r}));
    return in == pattern(5000, (rank + 2) % 3) ? Status::ok() : internalError("bad data");
  });
  expectAllOk(results);
}

TEST(SocketTransport, SetupErrors) {
  // An interface that does not exist fails on its rank, and the others learn
  // that rank could not listen instead of waiting for the deadline.
  auto results = runRanks(2, [&](int rank, Bootstrap& b) -> Status {
    return createSocketTransport(b, socketConfig(1, rank == 1 ? "nosuchif" : "")).status();
  });
  EXPECT_EQ(results[1].code(), braidInvalidArgument) << results[1].message();
  EXPECT_NE(results[1].message().find("nosuchif"), std::string::npos);
  EXPECT_EQ(results[0].code(), braidRemoteError) << results[0].message();
  EXPECT_EQ(results[0].peer(), 1);
  // Stream counts must agree.
  results = runRanks(2, [&](int rank, Bootstrap& b) -> Status {
    return createSocketTransport(b, socketConfig(rank + 1)).status();
  });
  EXPECT_EQ(results[0].code(), braidInvalidUsage) << results[0].message();
  // A single rank needs no connections.
  results = runRanks(1, [&](int, Bootstrap& b) -> Status {
    BRAID_ASSIGN_OR_RETURN(auto t, createSocketTransport(b, socketConfig(2)));
    return t->connector(0) == nullptr ? t->waitForActivity(Deadline::in(1), 1)
                                      : internalError("self connector");
  });
  expectAllOk(results);
}

// The connector alone over socketpairs, with the test as the peer writing raw
// frames in 3-byte dribbles: partial headers, partial elements, a stream that
// stalls on a message not yet posted, and fragments at odd offsets.
TEST(SocketConnector, ReassemblesDribbledFramesAndReducesWholeElements) {
  socket::AbortState abort;
  std::vector<socket::Fd> mine, theirs;
  for (int i = 0; i < 2; ++i) {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    mine.emplace_back(fds[0]);
    theirs.emplace_back(fds[1]);
  }
  socket::SocketConnector conn(/*rank=*/0, /*peer=*/1, /*nranks=*/2, std::move(mine), &abort);
  auto pump = [&] {
    bool progressed = false;
    Status st = conn.progress(&progressed);
    EXPECT_TRUE(st.isOk()) << st.message();
  };
  auto dribble = [&](int stream, const void* data, size_t bytes) {
    for (size_t at = 0; at < bytes; at += 3) {
      size_t n = std::min<size_t>(3, bytes - at);
      ASSERT_EQ(::send(theirs[stream].get(), static_cast<const uint8_t*>(data) + at, n, 0),
                static_cast<ssize_t>(n));
      pump();
    }
  };
  auto header = [](uint64_t seq, uint64_t total, uint64_t offset, uint32_t length) {
    return socket::FrameHeader{seq, total, offset, length, socket::kFrameMagic};
  };

  // Message 1 (a reduce of 10 floats, sent as fragments [6,10) then [0,6)) arrives
  // on stream 1 before message 0's receive is even complete, and before its own
  // receive is posted: stream 1 must stall without blocking stream 0.
  const float incoming[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  float accum[10], out[10];
  for (int i = 0; i < 10; ++i) accum[i] = 100.0f * i;
  auto late = header(1, sizeof(incoming), 6 * sizeof(float), 4 * sizeof(float));
  dribble(1, &late, sizeof(late));
  uint8_t small[5] = {}, expected[5] = {9, 8, 7, 6, 5};
  Request r0, r1;
  ASSERT_TRUE(conn.postRecv(copyTo(small), sizeof(small), &r0).isOk());
  auto early = header(0, sizeof(small), 0, sizeof(small));
  dribble(0, &early, sizeof(early));
  dribble(0, expected, sizeof(expected));
  EXPECT_TRUE(r0.done);
  EXPECT_EQ(std::memcmp(small, expected, sizeof(small)), 0);
  EXPECT_FALSE(conn.hasStartableWork());

  coll::ReduceFn sum = coll::reducerFor(braidFloat32, braidSum);
  ASSERT_NE(sum, nullptr);
  RecvSink reduceSink{reinterpret_cast<uint8_t*>(out), reinterpret_cast<const uint8_t*>(accum), sum,
                      sizeof(float)};
  ASSERT_TRUE(conn.postRecv(reduceSink, sizeof(incoming), &r1).isOk());
  EXPECT_TRUE(conn.hasStartableWork());  // the stalled stream can go on now
  dribble(1, incoming + 6, 4 * sizeof(float));
  EXPECT_FALSE(r1.done);
  auto first = header(1, sizeof(incoming), 0, 6 * sizeof(float));
  dribble(1, &first, sizeof(first));
  dribble(1, incoming, 6 * sizeof(float));
  ASSERT_TRUE(r1.done);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(out[i], accum[i] + incoming[i]) << i;

  // The send side: a message larger than one fragment is cut at fragment
  // boundaries and spread over both streams; it is this direction's first (seq 0).
  const size_t bytes = socket::SocketConnector::kFragmentBytes * 2 + 5;
  const std::vector<uint8_t> data = pattern(bytes, 42);
  std::vector<uint8_t> rebuilt(bytes);
  Request s0;
  ASSERT_TRUE(conn.postSend(data.data(), bytes, &s0).isOk());
  struct Parse {
    socket::FrameHeader h{};
    size_t headerGot = 0, payloadGot = 0;
  } parse[2];
  size_t received = 0;
  int usedStreams[2] = {0, 0};
  Deadline deadline = Deadline::in(10);
  while (received < bytes && !deadline.expired()) {
    pump();
    for (int s = 0; s < 2; ++s) {
      Parse& p = parse[s];
      if (p.headerGot < sizeof(p.h)) {
        ssize_t n = ::recv(theirs[s].get(), reinterpret_cast<uint8_t*>(&p.h) + p.headerGot,
                           sizeof(p.h) - p.headerGot, 0);
        if (n > 0) p.headerGot += n;
        if (p.headerGot < sizeof(p.h)) continue;
        ASSERT_EQ(p.h.magic, socket::kFrameMagic);
        ASSERT_EQ(p.h.seq, 0u);
        ASSERT_EQ(p.h.messageBytes, bytes);
        ASSERT_EQ(p.h.offset % socket::SocketConnector::kFragmentBytes, 0u);
        ASSERT_LE(p.h.offset + p.h.length, bytes);
        ++usedStreams[s];
      }
      ssize_t n = ::recv(theirs[s].get(), rebuilt.data() + p.h.offset + p.payloadGot,
                         p.h.length - p.payloadGot, 0);
      if (n > 0) p.payloadGot += n, received += n;
      if (p.payloadGot == p.h.length) p = Parse{};
    }
  }
  pump();
  EXPECT_TRUE(s0.done);
  EXPECT_EQ(rebuilt, data);
  EXPECT_GT(usedStreams[0], 0);
  EXPECT_GT(usedStreams[1], 0);
}

TEST(SocketUtil, ParsesAddresses) {
  auto v4 = socket::parseAddress("127.0.0.1:8080");
  ASSERT_TRUE(v4.isOk()) << v4.status().message();
  EXPECT_EQ(v4->family(), AF_INET);
  EXPECT_EQ(v4->port(), 8080);
  EXPECT_EQ(v4->toString(), "127.0.0.1:8080");
  auto v6 = socket::parseAddress("[::1]:9");
  ASSERT_TRUE(v6.isOk()) << v6.status().message();
  EXPECT_EQ(v6->family(), AF_INET6);
  EXPECT_EQ(v6->toString(), "[::1]:9");
  EXPECT_TRUE(v6->isLoopback());
  auto named = socket::parseAddress("localhost:1234");
  ASSERT_TRUE(named.isOk()) << named.status().message();
  EXPECT_TRUE(named->isLoopback());
  for (const char* bad : {"127.0.0.1", "::1:80", "host:", ":80", "1.2.3.4:99999", "1.2.3.4:x"}) {
    EXPECT_FALSE(socket::parseAddress(bad).isOk()) << bad;
  }
}

// BRAID_SOCKET_NSTREAMS=0 (the default): one stream when all ranks share an IP
// address, two across hosts; an explicit count always wins.
TEST(SocketUtil, AutomaticStreamCountFollowsHosts) {
  auto at = [](const char* text) { return socket::parseAddress(text).value(); };
  const std::vector<socket::SocketAddress> oneHost = {at("10.1.2.3:4000"), at("10.1.2.3:4001"),
                                                      at("10.1.2.3:5")};
  const std::vector<socket::SocketAddress> twoHosts = {at("10.1.2.3:4000"), at("10.1.2.4:4000")};
  const std::vector<socket::SocketAddress> families = {at("127.0.0.1:1"), at("[::1]:1")};
  EXPECT_EQ(socket::streamsFor(0, oneHost), 1);
  EXPECT_EQ(socket::streamsFor(0, twoHosts), socket::kStreamsAcrossHosts);
  EXPECT_EQ(socket::streamsFor(0, families), socket::kStreamsAcrossHosts);
  EXPECT_EQ(socket::streamsFor(3, oneHost), 3);
  EXPECT_EQ(socket::streamsFor(1, twoHosts), 1);
  EXPECT_EQ(Config{}.socketStreams, 0) << "automatic is the default";

  std::vector<int> counts(3, -1);
  auto results = runRanks(3, [&](int rank, Bootstrap& b) -> Status {
    BRAID_ASSIGN_OR_RETURN(auto t, createSocketTransport(b, socketConfig(0)));
    auto* peer = dynamic_cast<socket::SocketConnector*>(t->connector((rank + 1) % 3));
    if (peer == nullptr) return internalError("not a socket connector");
    counts[rank] = peer->streamCount();
    return Status::ok();
  });
  expectAllOk(results);
  EXPECT_EQ(counts, std::vector<int>(3, 1));
}

TEST(SocketUtil, ListenConnectAndTransferWithDeadlines) {
  auto lo = socket::parseAddress("127.0.0.1:0");
  ASSERT_TRUE(lo.isOk());
  auto listener = socket::listenOn(*lo, {});
  ASSERT_TRUE(listener.isOk()) << listener.status().message();
  EXPECT_NE(listener->address.port(), 0);
  auto client = socket::connectTo(listener->address, {true, 1 << 20, 1 << 20}, Deadline::in(5));
  ASSERT_TRUE(client.isOk()) << client.status().message();
  auto server = socket::acceptOne(listener->fd.get(), Deadline::in(5));
  ASSERT_TRUE(server.isOk()) << server.status().message();
  // Larger than the socket buffers, so sendAll must wait for the reader.
  const std::vector<uint8_t> data = pattern(8 << 20, 3);
  std::vector<uint8_t> got(data.size());
  std::thread reader([&] {
    EXPECT_TRUE(socket::recvAll(server->get(), got.data(), got.size(), Deadline::in(10)).isOk());
  });
  EXPECT_TRUE(socket::sendAll(client->get(), data.data(), data.size(), Deadline::in(10)).isOk());
  reader.join();
  EXPECT_EQ(got, data);
  // Nothing to read: the deadline turns the wait into a timeout.
  uint8_t byte;
  Status st = socket::recvAll(server->get(), &byte, 1, Deadline::in(0.05));
  EXPECT_EQ(st.code(), braidTimeout) << st.message();
  // The peer closes: EOF is a remote error; writing to it never raises SIGPIPE.
  client->reset();
  st = socket::recvAll(server->get(), &byte, 1, Deadline::in(5));
  EXPECT_EQ(st.code(), braidRemoteError) << st.message();
  Status sent;
  for (int i = 0; i < 100 && sent.isOk(); ++i) {
    sent = socket::sendAll(server->get(), data.data(), 1 << 16, Deadline::in(1));
  }
  EXPECT_FALSE(sent.isOk());
  // Nothing is listening on a closed port until the deadline.
  auto port = listener->address;
  listener->fd.reset();
  EXPECT_FALSE(socket::connectTo(port, {}, Deadline::in(0.1)).isOk());
}

TEST(SocketUtil, SelectsInterfaces) {
  auto any = socket::selectInterface("");
  ASSERT_TRUE(any.isOk()) << any.status().message();
  auto all = socket::listInterfaces();
  ASSERT_TRUE(all.isOk());
  bool haveNonLoopback = false;
  for (const auto& nic : *all) haveNonLoopback |= !nic.address.isLoopback();
  EXPECT_EQ(any->address.isLoopback(), !haveNonLoopback) << any->name;
  auto exact = socket::selectInterface("=lo");
  ASSERT_TRUE(exact.isOk());
  EXPECT_EQ(exact->name, "lo");
  EXPECT_FALSE(socket::selectInterface("=l").isOk());
  auto excluded = socket::selectInterface("^" + any->name);
  if (excluded.isOk()) {
    EXPECT_NE(excluded->name, any->name);
  }
  socket::SocketAddress target = exact->address;
  target.setPort(9);
  auto route = socket::localAddressTowards(target);
  ASSERT_TRUE(route.isOk()) << route.status().message();
  EXPECT_TRUE(route->isLoopback());
}

}  // namespace
}  // namespace braid::transport
