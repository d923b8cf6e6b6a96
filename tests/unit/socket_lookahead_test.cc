// The socket connector's receive path reads the next frame header in the same
// system call as the end of a plain fragment's payload (socket_connector.cc).
// One connector of rank 0 to rank 1 over a socketpair, with the test as the
// peer writing the wire format itself (frames built here from socket_wire.h,
// independently of the connector's sender):
//  - back-to-back messages in one write land in place, in order;
//  - a header read ahead for a message with no receive posted stalls the
//    stream (no EPOLLIN wanted) until that receive is posted;
//  - a header read ahead only in part is completed by later bytes;
//  - an abort notice read ahead still names its origin;
//  - a seeded stream of messages of mixed sizes (empty, one byte, several
//    fragments), written in pieces of random size while receives are posted
//    a few at a time, arrives intact.
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/net/socket_util.h"
#include "support/connector_over_socketpair.h"
#include "transports/socket/socket_connector.h"
#include "transports/socket/socket_wire.h"

namespace braid::transport {
namespace {

constexpr int kRanks = 4;
constexpr size_t kFragment = socket::SocketConnector::kFragmentBytes;

struct Link : testing::ConnectorOverSocketPair {
  Link() : ConnectorOverSocketPair(kRanks) {}
  // Writes all of `bytes`, pumping the connector while the socket is full.
  void write(const std::vector<uint8_t>& bytes) {
    Deadline deadline = Deadline::in(60);
    size_t at = 0;
    while (at < bytes.size() && !deadline.expired()) {
      ssize_t n = ::send(theirs.get(), bytes.data() + at, bytes.size() - at, MSG_DONTWAIT);
      if (n > 0) at += static_cast<size_t>(n);
      ASSERT_TRUE(pump().isOk());
    }
    ASSERT_EQ(at, bytes.size());
  }
};

void append(std::vector<uint8_t>* out, const void* data, size_t bytes) {
  const auto* p = static_cast<const uint8_t*>(data);
  out->insert(out->end(), p, p + bytes);
}

// Message `seq` of `payload` as the protocol frames it: kFragment-sized pieces,
// one header each; an empty message is one empty fragment.
std::vector<uint8_t> frames(uint64_t seq, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> out;
  size_t offset = 0;
  do {
    const size_t length = std::min(kFragment, payload.size() - offset);
    socket::FrameHeader h{seq, payload.size(), offset, static_cast<uint32_t>(length),
                          socket::kFrameMagic};
    append(&out, &h, sizeof(h));
    append(&out, payload.data() + offset, length);
    offset += length;
  } while (offset < payload.size());
  return out;
}

std::vector<uint8_t> pattern(size_t bytes, uint32_t seed) {
  std::vector<uint8_t> out(bytes);
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(i * 31 + seed * 7 + 3);
  return out;
}

TEST(SocketLookahead, BackToBackMessagesLandInPlace) {
  Link link;
  const std::vector<uint8_t> a = pattern(1000, 1), b = pattern(777, 2);
  std::vector<uint8_t> gotA(a.size()), gotB(b.size());
  Request ra, rb;
  ASSERT_TRUE(link.conn->postRecv(RecvSink{gotA.data()}, a.size(), &ra).isOk());
  ASSERT_TRUE(link.conn->postRecv(RecvSink{gotB.data()}, b.size(), &rb).isOk());
  std::vector<uint8_t> wire = frames(0, a);
  std::vector<uint8_t> second = frames(1, b);
  wire.insert(wire.end(), second.begin(), second.end());
  link.write(wire);
  for (int i = 0; i < 10 && !rb.done; ++i) ASSERT_TRUE(link.pump().isOk());
  ASSERT_TRUE(ra.done);
  ASSERT_TRUE(rb.done);
  EXPECT_EQ(gotA, a);
  EXPECT_EQ(gotB, b);
}

TEST(SocketLookahead, HeaderReadAheadStallsUntilItsReceiveIsPosted) {
  Link link;
  const std::vector<uint8_t> a = pattern(4096, 3), b = pattern(100, 4);
  std::vector<uint8_t> gotA(a.size()), gotB(b.size());
  Request ra, rb;
  ASSERT_TRUE(link.conn->postRecv(RecvSink{gotA.data()}, a.size(), &ra).isOk());
  std::vector<uint8_t> wire = frames(0, a);
  std::vector<uint8_t> second = frames(1, b);
  // Message 1's header and only part of its payload: the header is complete.
  wire.insert(wire.end(), second.begin(), second.begin() + sizeof(socket::FrameHeader) + 10);
  link.write(wire);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(link.pump().isOk());
  ASSERT_TRUE(ra.done);
  EXPECT_EQ(gotA, a);
  EXPECT_FALSE(link.conn->hasStartableWork());
  EXPECT_EQ(link.conn->wantedEvents(0) & EPOLLIN, 0u) << "a stalled stream must not wake epoll";

  rb = Request{};
  ASSERT_TRUE(link.conn->postRecv(RecvSink{gotB.data()}, b.size(), &rb).isOk());
  EXPECT_TRUE(link.conn->hasStartableWork());
  ASSERT_TRUE(link.pump().isOk());
  EXPECT_NE(link.conn->wantedEvents(0) & EPOLLIN, 0u);
  link.write(std::vector<uint8_t>(second.begin() + sizeof(socket::FrameHeader) + 10, second.end()));
  for (int i = 0; i < 5 && !rb.done; ++i) ASSERT_TRUE(link.pump().isOk());
  ASSERT_TRUE(rb.done);
  EXPECT_EQ(gotB, b);
}

TEST(SocketLookahead, PartHeaderReadAheadIsCompletedLater) {
  Link link;
  const std::vector<uint8_t> a = pattern(333, 5), b = pattern(2 * kFragment + 9, 6);
  std::vector<uint8_t> gotA(a.size()), gotB(b.size());
  Request ra, rb;
  ASSERT_TRUE(link.conn->postRecv(RecvSink{gotA.data()}, a.size(), &ra).isOk());
  ASSERT_TRUE(link.conn->postRecv(RecvSink{gotB.data()}, b.size(), &rb).isOk());
  std::vector<uint8_t> wire = frames(0, a);
  const std::vector<uint8_t> second = frames(1, b);
  const size_t cut = 11;  // inside message 1's first header
  wire.insert(wire.end(), second.begin(), second.begin() + cut);
  link.write(wire);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(link.pump().isOk());
  ASSERT_TRUE(ra.done);
  EXPECT_FALSE(rb.done);
  link.write(std::vector<uint8_t>(second.begin() + cut, second.end()));
  for (int i = 0; i < 10 && !rb.done; ++i) ASSERT_TRUE(link.pump().isOk());
  ASSERT_TRUE(rb.done);
  EXPECT_EQ(gotA, a);
  EXPECT_EQ(gotB, b);
}

TEST(SocketLookahead, NoticeReadAheadNamesItsOrigin) {
  Link link;
  const std::vector<uint8_t> a = pattern(5000, 7);
  std::vector<uint8_t> gotA(a.size());
  Request ra;
  ASSERT_TRUE(link.conn->postRecv(RecvSink{gotA.data()}, a.size(), &ra).isOk());
  std::vector<uint8_t> wire = frames(0, a);
  const std::string reason = "rank 3: out of memory";
  socket::FrameHeader notice = socket::noticeHeader(3, static_cast<uint32_t>(reason.size()));
  append(&wire, &notice, sizeof(notice));
  append(&wire, reason.data(), reason.size());
  link.write(wire);
  Status failure;
  for (int i = 0; i < 10 && failure.isOk(); ++i) failure = link.pump();
  ASSERT_TRUE(ra.done);
  EXPECT_EQ(gotA, a);
  ASSERT_FALSE(failure.isOk()) << "the notice behind the payload was never read";
  EXPECT_EQ(failure.peer(), 3) << failure.message();
  EXPECT_NE(failure.message().find("out of memory"), std::string::npos) << failure.message();
}

TEST(SocketLookahead, SeededMessagesOfMixedSizesArriveIntact) {
  Link link;
  std::mt19937 rng(20261121);
  const size_t sizes[] = {
      0, 1, 31, 32, 33, 4096, kFragment - 1, kFragment, kFragment + 1, 3 * kFragment + 17};
  constexpr int kMessages = 40;
  std::vector<std::vector<uint8_t>> sent, got(kMessages);
  std::vector<uint8_t> wire;
  for (int m = 0; m < kMessages; ++m) {
    sent.push_back(pattern(sizes[rng() % std::size(sizes)], m));
    std::vector<uint8_t> f = frames(m, sent.back());
    wire.insert(wire.end(), f.begin(), f.end());
  }
  std::vector<Request> requests(kMessages);
  int posted = 0;
  auto postSome = [&] {  // a few receives at a time, as a schedule's steps post them
    for (int k = static_cast<int>(rng() % 3); k >= 0 && posted < kMessages; --k, ++posted) {
      got[posted].resize(sent[posted].size());
      ASSERT_TRUE(
          link.conn->postRecv(RecvSink{got[posted].data()}, got[posted].size(), &requests[posted])
              .isOk());
    }
  };
  Deadline deadline = Deadline::in(60);
  size_t at = 0;
  while ((at < wire.size() || !requests.back().done) && !deadline.expired()) {
    if (at < wire.size()) {
      const size_t piece = std::min<size_t>(wire.size() - at, 1 + rng() % (3 * kFragment / 2));
      ssize_t n = ::send(link.theirs.get(), wire.data() + at, piece, MSG_DONTWAIT);
      if (n > 0) at += static_cast<size_t>(n);
    }
    if (rng() % 4 == 0) postSome();
    ASSERT_TRUE(link.pump().isOk());
  }
  ASSERT_EQ(posted, kMessages);
  for (int m = 0; m < kMessages; ++m) {
    ASSERT_TRUE(requests[m].done) << "message " << m;
    EXPECT_EQ(got[m], sent[m]) << "message " << m;
  }
}

}  // namespace
}  // namespace braid::transport
