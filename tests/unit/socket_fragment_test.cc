// The socket connector's fragment size (BRAID_SOCKET_FRAGMENT_BYTES: a power
// of two up to 1 GiB; 256 KiB by default, socket_transport.cc):
//  - a connector sending whole messages puts one header on the wire for a
//    message of several default fragments, and the bytes after it are the
//    message (read here with the wire format of socket_wire.h, not by a
//    connector);
//  - two connectors over one socketpair, one sending whole messages and the
//    other 256 KiB fragments (ranks may differ: a receiver assumes no fragment
//    size), deliver plain and reducing messages in both directions, larger
//    than a fragment and than the reduce staging buffer and of odd lengths;
//    results are checked against sums computed here element by element;
//  - Config::fromEnv takes 0 and powers of two from 4096 to 1 GiB and refuses
//    anything else with a message naming the variable;
//  - 0 means 1 MiB for a peer reached over one stream and 256 KiB for one
//    striped over several; a configured size wins either way.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstring>
#include <memory>
#include <vector>

#include "core/config.h"
#include "core/deadline.h"
#include "core/kernels/reduce.h"
#include "core/net/socket_util.h"
#include "support/spawn.h"
#include "transports/socket/socket_connector.h"
#include "transports/socket/socket_transport.h"
#include "transports/socket/socket_wire.h"

namespace braid::transport {
namespace {

using socket::SocketConnector;
constexpr size_t kFragment = SocketConnector::kFragmentBytes;
constexpr size_t kWhole = SocketConnector::kMaxFragmentBytes;

std::vector<uint8_t> bytePattern(size_t n, unsigned seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 131 + seed * 7 + (i >> 9));
  return v;
}

std::vector<float> floatPattern(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 17 + seed) % 1000);  // exact sums
  return v;
}

// A connector of rank `rank` to `peer` over one end of a socketpair.
std::unique_ptr<SocketConnector> connectorOn(int fd, int rank, int peer,
                                             const socket::AbortState* abort, size_t fragment) {
  std::vector<socket::Fd> streams;
  streams.emplace_back(fd);
  return std::make_unique<SocketConnector>(rank, peer, /*nranks=*/2, std::move(streams), abort,
                                           /*waits=*/nullptr, fragment);
}

TEST(SocketFragment, WholeMessageGoesOutUnderOneHeader) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  socket::AbortState abort;
  auto conn = connectorOn(fds[0], 0, 1, &abort, kWhole);
  socket::Fd theirs(fds[1]);

  const size_t bytes = 3 * kFragment + 7;
  const std::vector<uint8_t> data = bytePattern(bytes, 1);
  Request req;
  ASSERT_TRUE(conn->postSend(data.data(), bytes, &req).isOk());
  std::vector<uint8_t> wire(sizeof(socket::FrameHeader) + bytes);
  size_t got = 0;
  Deadline deadline = Deadline::in(60);
  while (got < wire.size() && !deadline.expired()) {
    bool progressed = false;
    ASSERT_TRUE(conn->progress(&progressed).isOk());
    ssize_t n = ::recv(theirs.get(), wire.data() + got, wire.size() - got, MSG_DONTWAIT);
    if (n > 0) got += static_cast<size_t>(n);
  }
  ASSERT_EQ(got, wire.size());
  bool progressed = false;
  ASSERT_TRUE(conn->progress(&progressed).isOk());
  EXPECT_TRUE(req.done);
  socket::FrameHeader h;
  std::memcpy(&h, wire.data(), sizeof(h));
  EXPECT_EQ(h.magic, socket::kFrameMagic);
  EXPECT_EQ(h.seq, 0u);
  EXPECT_EQ(h.messageBytes, bytes);
  EXPECT_EQ(h.offset, 0u);
  EXPECT_EQ(h.length, bytes);
  EXPECT_EQ(std::memcmp(wire.data() + sizeof(h), data.data(), bytes), 0);
  // Nothing after the message: no second header.
  uint8_t extra;
  EXPECT_LT(::recv(theirs.get(), &extra, 1, MSG_DONTWAIT), 0);
}

TEST(SocketFragment, WholeAndCutMessagesMeetInBothDirections) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  socket::AbortState abortA, abortB;
  auto a = connectorOn(fds[0], 0, 1, &abortA, kWhole);     // whole messages
  auto b = connectorOn(fds[1], 1, 0, &abortB, kFragment);  // 256 KiB fragments
  coll::ReduceFn sum = coll::reducerFor(braidFloat32, braidSum);
  ASSERT_NE(sum, nullptr);

  // a -> b: a plain message, then a reducing one (odd element count, larger
  // than a fragment and than the staging buffer). b -> a: a reducing one.
  const std::vector<uint8_t> plain = bytePattern(3 * kFragment + 5, 2);
  const size_t n1 = 2 * kFragment / sizeof(float) + 1001, n2 = kFragment / sizeof(float) + 3;
  const std::vector<float> toB = floatPattern(n1, 3), accumB = floatPattern(n1, 4);
  const std::vector<float> toA = floatPattern(n2, 5), accumA = floatPattern(n2, 6);
  std::vector<uint8_t> plainOut(plain.size());
  std::vector<float> outB(n1), outA(n2);

  Request sa0, sa1, sb0, ra0, rb0, rb1;
  ASSERT_TRUE(a->postSend(plain.data(), plain.size(), &sa0).isOk());
  ASSERT_TRUE(a->postSend(toB.data(), n1 * sizeof(float), &sa1).isOk());
  ASSERT_TRUE(b->postSend(toA.data(), n2 * sizeof(float), &sb0).isOk());
  ASSERT_TRUE(b->postRecv(RecvSink{plainOut.data()}, plain.size(), &rb0).isOk());
  RecvSink reduceB{reinterpret_cast<uint8_t*>(outB.data()),
                   reinterpret_cast<const uint8_t*>(accumB.data()), sum, sizeof(float)};
  ASSERT_TRUE(b->postRecv(reduceB, n1 * sizeof(float), &rb1).isOk());
  RecvSink reduceA{reinterpret_cast<uint8_t*>(outA.data()),
                   reinterpret_cast<const uint8_t*>(accumA.data()), sum, sizeof(float)};
  ASSERT_TRUE(a->postRecv(reduceA, n2 * sizeof(float), &ra0).isOk());

  Request* all[] = {&sa0, &sa1, &sb0, &ra0, &rb0, &rb1};
  auto done = [&] {
    for (Request* r : all) {
      if (!r->done) return false;
    }
    return true;
  };
  Deadline deadline = Deadline::in(60);
  while (!done() && !deadline.expired()) {
    bool progressed = false;
    Status st = a->progress(&progressed);
    ASSERT_TRUE(st.isOk()) << st.message();
    st = b->progress(&progressed);
    ASSERT_TRUE(st.isOk()) << st.message();
  }
  ASSERT_TRUE(done());
  EXPECT_EQ(plainOut, plain);
  for (size_t i = 0; i < n1; ++i) ASSERT_EQ(outB[i], accumB[i] + toB[i]) << i;
  for (size_t i = 0; i < n2; ++i) ASSERT_EQ(outA[i], accumA[i] + toA[i]) << i;
}

TEST(SocketFragment, ConfigTakesPowersOfTwoFrom4KiBTo1GiB) {
  const std::pair<const char*, size_t> good[] = {
      {"0", 0}, {"4096", 4096}, {"1M", 1 << 20}, {"1073741824", size_t{1} << 30}};
  for (const auto& [value, bytes] : good) {
    testing::ScopedEnv env("BRAID_SOCKET_FRAGMENT_BYTES", value);
    Result<Config> config = Config::fromEnv();
    ASSERT_TRUE(config.isOk()) << value << ": " << config.status().message();
    EXPECT_EQ(config->socketFragmentBytes, bytes) << value;
  }
  for (const char* value : {"2048", "12288", "2147483648", "-1", "big"}) {
    testing::ScopedEnv env("BRAID_SOCKET_FRAGMENT_BYTES", value);
    Result<Config> config = Config::fromEnv();
    ASSERT_FALSE(config.isOk()) << value;
    EXPECT_NE(config.status().message().find("BRAID_SOCKET_FRAGMENT_BYTES"), std::string::npos)
        << config.status().message();
  }
}

TEST(SocketFragment, DefaultIsOneMiBOnOneStreamAndSmallerWhenStriped) {
  EXPECT_EQ(socketFragmentBytes(0, 1), size_t{1} << 20);
  EXPECT_EQ(socketFragmentBytes(0, 2), kFragment);
  EXPECT_EQ(socketFragmentBytes(0, 8), kFragment);
  EXPECT_EQ(socketFragmentBytes(4096, 1), 4096u);
  EXPECT_EQ(socketFragmentBytes(kWhole, 4), kWhole);
}

}  // namespace
}  // namespace braid::transport
