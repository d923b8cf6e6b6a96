// A poll of the socket connector that moves a send while no receive is posted
// makes no read (socket_connector.cc, progress): a call that only sends, such
// as a broadcast's root, is done without a system call that finds nothing.
// One connector of rank 0 to rank 1 over a socketpair, the test being the peer
// and reading and writing the wire format itself (socket_wire.h):
//  - a message the peer sent early stays unread by a send-only poll (its
//    stream still wants EPOLLIN: the header was not read and did not stall it),
//    the frame sent is exact, and the early message arrives intact once its
//    receive is posted;
//  - a poll that moves no send still reads ahead (the header stalls the
//    stream), so data waiting on the socket never keeps epoll spinning;
//  - an abort notice that arrived during a send-only poll is reported, naming
//    its origin, by the next poll;
//  - with a receive posted, a poll that sends also reads.
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "support/connector_over_socketpair.h"
#include "transports/socket/socket_connector.h"
#include "transports/socket/socket_wire.h"

namespace braid::transport {
namespace {

constexpr int kRanks = 2;

struct Link : testing::ConnectorOverSocketPair {
  Link() : ConnectorOverSocketPair(kRanks) {}
  // The peer writes `bytes` (small: they fit the socket buffer at once).
  void write(const std::vector<uint8_t>& bytes) {
    ASSERT_EQ(::send(theirs.get(), bytes.data(), bytes.size(), MSG_DONTWAIT),
              static_cast<ssize_t>(bytes.size()));
  }
  // The peer reads exactly `bytes` that the connector sent.
  std::vector<uint8_t> read(size_t bytes) {
    std::vector<uint8_t> out(bytes);
    EXPECT_EQ(::recv(theirs.get(), out.data(), bytes, MSG_DONTWAIT), static_cast<ssize_t>(bytes));
    return out;
  }
};

void append(std::vector<uint8_t>* out, const void* data, size_t bytes) {
  const auto* p = static_cast<const uint8_t*>(data);
  out->insert(out->end(), p, p + bytes);
}

// Message `seq` as one fragment: a header, then the payload.
std::vector<uint8_t> frame(uint64_t seq, const std::vector<uint8_t>& payload) {
  socket::FrameHeader h{seq, payload.size(), 0, static_cast<uint32_t>(payload.size()),
                        socket::kFrameMagic};
  std::vector<uint8_t> out;
  append(&out, &h, sizeof(h));
  append(&out, payload.data(), payload.size());
  return out;
}

std::vector<uint8_t> pattern(size_t bytes, uint32_t seed) {
  std::vector<uint8_t> out(bytes);
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(i * 13 + seed * 5 + 1);
  return out;
}

bool wantsInput(const Link& link) { return (link.conn->wantedEvents(0) & EPOLLIN) != 0; }

TEST(SocketSendOnly, SendOnlyPollLeavesEarlyMessageUnread) {
  Link link;
  const std::vector<uint8_t> early = pattern(8, 1), mine = pattern(8, 2);
  link.write(frame(0, early));

  Request send;
  ASSERT_TRUE(link.conn->postSend(mine.data(), mine.size(), &send).isOk());
  ASSERT_TRUE(link.pump().isOk());
  ASSERT_TRUE(send.done);
  EXPECT_TRUE(wantsInput(link)) << "the send-only poll read the early header (the stream stalled)";
  EXPECT_EQ(link.read(sizeof(socket::FrameHeader) + mine.size()), frame(0, mine));

  std::vector<uint8_t> got(early.size());
  Request recv;
  ASSERT_TRUE(link.conn->postRecv(RecvSink{got.data()}, got.size(), &recv).isOk());
  for (int i = 0; i < 5 && !recv.done; ++i) ASSERT_TRUE(link.pump().isOk());
  ASSERT_TRUE(recv.done);
  EXPECT_EQ(got, early);
}

TEST(SocketSendOnly, PollWithoutSendStillReadsAhead) {
  Link link;
  const std::vector<uint8_t> early = pattern(8, 3), mine = pattern(100, 4);
  link.write(frame(0, early));
  Request send;
  ASSERT_TRUE(link.conn->postSend(mine.data(), mine.size(), &send).isOk());
  ASSERT_TRUE(link.pump().isOk());
  ASSERT_TRUE(send.done);
  ASSERT_TRUE(link.pump().isOk());  // nothing left to send: this poll reads
  EXPECT_FALSE(wantsInput(link)) << "a header with no receive posted must stall the stream";
  EXPECT_EQ(link.read(sizeof(socket::FrameHeader) + mine.size()), frame(0, mine));

  std::vector<uint8_t> got(early.size());
  Request recv;
  ASSERT_TRUE(link.conn->postRecv(RecvSink{got.data()}, got.size(), &recv).isOk());
  EXPECT_TRUE(link.conn->hasStartableWork());
  for (int i = 0; i < 5 && !recv.done; ++i) ASSERT_TRUE(link.pump().isOk());
  ASSERT_TRUE(recv.done);
  EXPECT_EQ(got, early);
}

TEST(SocketSendOnly, NoticeDuringSendOnlyPollIsReportedByTheNext) {
  Link link;
  const std::string reason = "rank 1: out of memory";
  socket::FrameHeader notice = socket::noticeHeader(1, static_cast<uint32_t>(reason.size()));
  std::vector<uint8_t> wire;
  append(&wire, &notice, sizeof(notice));
  append(&wire, reason.data(), reason.size());
  link.write(wire);

  const std::vector<uint8_t> mine = pattern(8, 5);
  Request send;
  ASSERT_TRUE(link.conn->postSend(mine.data(), mine.size(), &send).isOk());
  ASSERT_TRUE(link.pump().isOk());
  ASSERT_TRUE(send.done);
  Status failure;
  for (int i = 0; i < 5 && failure.isOk(); ++i) failure = link.pump();
  ASSERT_FALSE(failure.isOk()) << "the notice was never read";
  EXPECT_EQ(failure.peer(), 1) << failure.message();
  EXPECT_NE(failure.message().find("out of memory"), std::string::npos) << failure.message();
}

TEST(SocketSendOnly, PollThatSendsReadsWhenAReceiveIsPosted) {
  Link link;
  const std::vector<uint8_t> theirs = pattern(8, 6), mine = pattern(8, 7);
  link.write(frame(0, theirs));
  std::vector<uint8_t> got(theirs.size());
  Request send, recv;
  ASSERT_TRUE(link.conn->postRecv(RecvSink{got.data()}, got.size(), &recv).isOk());
  ASSERT_TRUE(link.conn->postSend(mine.data(), mine.size(), &send).isOk());
  ASSERT_TRUE(link.pump().isOk());
  EXPECT_TRUE(send.done);
  EXPECT_TRUE(recv.done) << "an exchange's receive waited for a second poll";
  EXPECT_EQ(got, theirs);
  EXPECT_EQ(link.read(sizeof(socket::FrameHeader) + mine.size()), frame(0, mine));
}

}  // namespace
}  // namespace braid::transport
