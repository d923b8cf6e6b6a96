// Abort notices of the socket transport (transports/socket/socket_notice.cc),
// on one connector over socketpairs with the test as the peer:
//  - a notice names its origin, also when it arrives in dribbles on a stream
//    while another stream is stalled on a message not yet posted;
//  - a notice on one stream wins over the EOF of another stream of the peer,
//    also behind a fragment of a message not yet posted, and over a send
//    that fails on the very stream that holds it (one stream per peer);
//  - malformed notices are rejected, naming the peer;
//  - a sender finishes the fragment in flight before the notice, so the byte
//    stream stays framed (parsed here independently of the connector), also
//    when the socket is full as the abort begins and the peer reads later;
//    a peer that never reads costs the abort its grace, no more;
//  - wait reports go out between fragments, are recorded by the receiver,
//    and leave the connection working.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/net/socket_util.h"
#include "transports/socket/socket_connector.h"
#include "transports/socket/socket_wire.h"

namespace braid::transport {
namespace {

constexpr int kRank = 0, kPeer = 1, kRanks = 4;

// A connector of rank 0 to rank 1 (of 4) over `streams` socketpairs; the test holds the far ends.
struct Link {
  socket::AbortState abort;
  std::vector<int> waits = std::vector<int>(kRanks, -1);
  std::vector<socket::Fd> theirs;
  std::unique_ptr<socket::SocketConnector> conn;

  explicit Link(int streams) {
    std::vector<socket::Fd> mine;
    for (int i = 0; i < streams; ++i) {
      int fds[2];
      EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
      mine.emplace_back(fds[0]);
      theirs.emplace_back(fds[1]);
    }
    conn = std::make_unique<socket::SocketConnector>(kRank, kPeer, kRanks, std::move(mine), &abort,
                                                     &waits);
  }
  Status pump() {
    bool progressed = false;
    return conn->progress(&progressed);
  }
  void write(int stream, const void* data, size_t bytes) {
    ASSERT_EQ(::send(theirs[stream].get(), data, bytes, MSG_NOSIGNAL), static_cast<ssize_t>(bytes));
  }
  // Everything the connector wrote on `stream` so far.
  std::vector<uint8_t> drain(int stream) {
    std::vector<uint8_t> out;
    uint8_t chunk[65536];
    while (true) {
      ssize_t n = ::recv(theirs[stream].get(), chunk, sizeof(chunk), MSG_DONTWAIT);
      if (n <= 0) return out;
      out.insert(out.end(), chunk, chunk + n);
    }
  }
};

std::string noticeBytes(int origin, const std::string& reason) {
  socket::FrameHeader h = socket::noticeHeader(origin, static_cast<uint32_t>(reason.size()));
  std::string out(reinterpret_cast<const char*>(&h), sizeof(h));
  return out + reason;
}

TEST(SocketNotice, NamesTheOriginEvenBehindAStalledStream) {
  Link link(2);
  uint8_t buffer[16];
  Request r;
  ASSERT_TRUE(link.conn->postRecv(RecvSink{buffer}, sizeof(buffer), &r).isOk());
  // Stream 0 stalls on message 1, whose receive is not posted.
  socket::FrameHeader later{1, 8, 0, 8, socket::kFrameMagic};
  link.write(0, &later, sizeof(later));
  ASSERT_TRUE(link.pump().isOk());
  // Stream 1 carries the notice, three bytes at a time.
  const std::string notice = noticeBytes(3, "socket connection to rank 3: closed");
  Status st;
  for (size_t at = 0; at < notice.size() && st.isOk(); at += 3) {
    link.write(1, notice.data() + at, std::min<size_t>(3, notice.size() - at));
    st = link.pump();
    if (at + 3 < notice.size()) {
      EXPECT_TRUE(st.isOk()) << "failed early: " << st.message();
    }
  }
  EXPECT_EQ(st.code(), braidRemoteError);
  EXPECT_EQ(st.peer(), 3);
  EXPECT_NE(st.message().find("rank 3 failed (reported by rank 1)"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("closed"), std::string::npos) << st.message();
  // Sticky: later calls report the same origin.
  EXPECT_EQ(link.pump().peer(), 3);
  EXPECT_FALSE(r.done);
}

TEST(SocketNotice, WinsOverTheEofOfAnotherStream) {
  Link link(2);
  uint8_t buffer[16];
  Request r;
  ASSERT_TRUE(link.conn->postRecv(RecvSink{buffer}, sizeof(buffer), &r).isOk());
  // The peer sent its notice on stream 1 and closed both streams.
  const std::string notice = noticeBytes(2, "stalled");
  link.write(1, notice.data(), notice.size());
  ::shutdown(link.theirs[0].get(), SHUT_RDWR);
  ::shutdown(link.theirs[1].get(), SHUT_RDWR);
  Status st = link.pump();
  EXPECT_EQ(st.peer(), 2) << st.message();
  EXPECT_NE(st.message().find("rank 2 failed (reported by rank 1): stalled"), std::string::npos)
      << st.message();
}

// One stream per peer: the peer sent a fragment this rank has no receive
// posted for, then its notice, and closed. This rank's next send fails on
// that stream, and the notice is found behind the unread fragment.
TEST(SocketNotice, FoundOnTheStreamWhoseSendFailed) {
  Link link(1);
  socket::FrameHeader early{0, 4, 0, 4, socket::kFrameMagic};
  link.write(0, &early, sizeof(early));
  link.write(0, "data", 4);
  const std::string notice = noticeBytes(2, "killed");
  link.write(0, notice.data(), notice.size());
  link.theirs[0] = socket::Fd();  // closed with this rank's bytes unread
  uint8_t payload[64] = {};
  Request r;
  ASSERT_TRUE(link.conn->postSend(payload, sizeof(payload), &r).isOk());
  Status st = link.pump();
  EXPECT_EQ(st.code(), braidRemoteError);
  EXPECT_EQ(st.peer(), 2) << st.message();
  EXPECT_NE(st.message().find("rank 2 failed (reported by rank 1): killed"), std::string::npos)
      << st.message();
}

// Two streams: one ends while the other stalls on a message not yet posted
// with the notice behind it; the notice still wins over the EOF.
TEST(SocketNotice, FoundBehindAStalledFragmentOfAnotherStream) {
  Link link(2);
  uint8_t buffer[8];
  Request r;
  ASSERT_TRUE(link.conn->postRecv(RecvSink{buffer}, sizeof(buffer), &r).isOk());
  socket::FrameHeader later{1, 3, 0, 3, socket::kFrameMagic};
  link.write(1, &later, sizeof(later));
  link.write(1, "abc", 3);
  const std::string notice = noticeBytes(3, "stalled");
  link.write(1, notice.data(), notice.size());
  ::shutdown(link.theirs[0].get(), SHUT_RDWR);
  Status st = link.pump();
  EXPECT_EQ(st.peer(), 3) << st.message();
  EXPECT_NE(st.message().find("rank 3 failed (reported by rank 1): stalled"), std::string::npos)
      << st.message();
}

TEST(SocketNotice, ACutOffReasonStillNamesTheOrigin) {
  Link link(1);
  const std::string notice = noticeBytes(3, "a reason that never fully arrives");
  link.write(0, notice.data(), sizeof(socket::FrameHeader) + 5);
  ::shutdown(link.theirs[0].get(), SHUT_RDWR);
  Status st = link.pump();
  EXPECT_EQ(st.peer(), 3) << st.message();
  EXPECT_NE(st.message().find("[cut off]"), std::string::npos) << st.message();
}

TEST(SocketNotice, MalformedNoticesAreRejectedNamingThePeer) {
  const socket::FrameHeader bad[] = {
      socket::noticeHeader(kRanks, 0),                          // no such rank
      socket::noticeHeader(2, socket::kNoticeReasonBytes + 1),  // too long
      socket::FrameHeader{2, 7, 0, 0, socket::kNoticeMagic},    // stray fields
  };
  for (const socket::FrameHeader& h : bad) {
    Link link(1);
    link.write(0, &h, sizeof(h));
    Status st = link.pump();
    EXPECT_EQ(st.code(), braidRemoteError);
    EXPECT_EQ(st.peer(), kPeer) << st.message();
    EXPECT_NE(st.message().find("corrupt notice"), std::string::npos) << st.message();
  }
}

TEST(SocketNotice, NoticeBlamingThisRankSaysSo) {
  Link link(1);
  const std::string notice = noticeBytes(kRank, "timed out waiting for rank 0");
  link.write(0, notice.data(), notice.size());
  Status st = link.pump();
  EXPECT_EQ(st.peer(), kRank);
  EXPECT_NE(st.message().find("rank 1 blames this rank (0)"), std::string::npos) << st.message();
}

// How many bytes a fresh socketpair takes in one large write (what the
// connector's first write will get through).
size_t socketCapacity() {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  std::vector<uint8_t> big(4 << 20);
  ssize_t n = ::send(fds[0], big.data(), big.size(), MSG_NOSIGNAL);
  ::close(fds[0]);
  ::close(fds[1]);
  return n > 0 ? static_cast<size_t>(n) : 0;
}

// Parses `wire` as data fragments of `data` (in order, on one stream) up to the
// one in flight, then the notice {3, "rank 3: gone"} as the last bytes.
void expectFragmentsThenNotice(const std::vector<uint8_t>& wire, const std::vector<uint8_t>& data) {
  size_t at = 0, payload = 0;
  bool sawNotice = false;
  while (at + sizeof(socket::FrameHeader) <= wire.size()) {
    socket::FrameHeader h;
    std::memcpy(&h, wire.data() + at, sizeof(h));
    at += sizeof(h);
    ASSERT_LE(at + h.length, wire.size()) << "a frame was cut";
    if (h.magic == socket::kNoticeMagic) {
      EXPECT_EQ(h.seq, 3u);
      EXPECT_EQ(std::string(reinterpret_cast<const char*>(wire.data() + at), h.length),
                "rank 3: gone");
      at += h.length;
      sawNotice = true;
      break;
    }
    ASSERT_EQ(h.magic, socket::kFrameMagic);
    ASSERT_EQ(h.offset, payload);
    EXPECT_EQ(std::memcmp(wire.data() + at, data.data() + h.offset, h.length), 0);
    payload += h.length;
    at += h.length;
  }
  EXPECT_TRUE(sawNotice);
  EXPECT_EQ(at, wire.size()) << "bytes after the notice";
  EXPECT_GT(payload, 0u);
}

std::vector<uint8_t> patterned(size_t bytes) {
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(i * 7 + 1);
  return data;
}

// One stream with a fragment half sent: the message is larger than the socket takes at once.
struct HalfSentLink : Link {
  const std::vector<uint8_t> data = patterned(socketCapacity() + 65536);
  Request send;
  HalfSentLink() : Link(1) {}
  void start() {
    ASSERT_TRUE(conn->postSend(data.data(), data.size(), &send).isOk());
    ASSERT_TRUE(pump().isOk());
    ASSERT_LT(send.completed, data.size())
        << "the socket took the whole message; the test needs a partial";
  }
  void abort(int graceMs) {
    socket::deliverAbortNotices(std::span(&conn, 1), 3, "rank 3: gone", graceMs);
    conn->shutdownStreams();
  }
  void drainInto(std::vector<uint8_t>* wire) {
    std::vector<uint8_t> more = drain(0);
    wire->insert(wire->end(), more.begin(), more.end());
  }
};

TEST(SocketNotice, SenderFinishesTheFragmentInFlightFirst) {
  HalfSentLink link;
  ASSERT_NO_FATAL_FAILURE(link.start());
  std::vector<uint8_t> wire = link.drain(0);
  link.abort(socket::kAbortNoticeGraceMs);
  link.drainInto(&wire);
  expectFragmentsThenNotice(wire, link.data);
}

// The socket is full when the abort begins; the peer, not yet aware of the
// failure, reads on a moment later. The notice must still reach it whole.
TEST(SocketNotice, ReachesAPeerThatReadsOnlyAfterTheAbortBegan) {
  HalfSentLink link;
  ASSERT_NO_FATAL_FAILURE(link.start());
  std::vector<uint8_t> wire;
  std::thread reader([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    for (int quiet = 0; quiet < 50;) {  // until nothing came for 50 ms
      const size_t before = wire.size();
      link.drainInto(&wire);
      quiet = wire.size() == before ? quiet + 1 : 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  link.abort(10000);
  reader.join();
  link.drainInto(&wire);
  expectFragmentsThenNotice(wire, link.data);
}

TEST(SocketNotice, APeerThatNeverReadsCostsTheAbortItsGraceOnly) {
  HalfSentLink link;
  ASSERT_NO_FATAL_FAILURE(link.start());
  const auto start = std::chrono::steady_clock::now();
  link.abort(100);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(seconds, 0.09);
  EXPECT_LT(seconds, 5.0) << "the abort waited far beyond its grace";
}

TEST(SocketNotice, WaitReportsAreRecordedAndTheConnectionGoesOn) {
  Link link(1);
  uint8_t got[6] = {};
  const uint8_t sent[6] = {1, 2, 3, 4, 5, 6};
  Request r;
  ASSERT_TRUE(link.conn->postRecv(RecvSink{got}, sizeof(got), &r).isOk());
  socket::FrameHeader report = socket::waitReportHeader(3);
  link.write(0, &report, sizeof(report));
  bool progressed = true;
  ASSERT_TRUE(link.conn->progress(&progressed).isOk());
  EXPECT_FALSE(progressed) << "a wait report is not progress";
  EXPECT_EQ(link.waits[kPeer], 3);
  socket::FrameHeader data{0, sizeof(sent), 0, sizeof(sent), socket::kFrameMagic};
  link.write(0, &data, sizeof(data));
  link.write(0, sent, sizeof(sent));
  ASSERT_TRUE(link.pump().isOk());
  EXPECT_TRUE(r.done);
  EXPECT_EQ(std::memcmp(got, sent, sizeof(sent)), 0);
  // A report with text is malformed.
  socket::FrameHeader bad = socket::waitReportHeader(2);
  bad.length = 4;
  link.write(0, &bad, sizeof(bad));
  EXPECT_EQ(link.pump().peer(), kPeer);
}

TEST(SocketNotice, WaitReportGoesOutBetweenFragments) {
  Link link(1);
  const size_t bytes = socketCapacity() + 3 * socket::SocketConnector::kFragmentBytes;
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(i * 13 + 5);
  Request s;
  ASSERT_TRUE(link.conn->postSend(data.data(), bytes, &s).isOk());
  ASSERT_TRUE(link.pump().isOk());
  ASSERT_FALSE(s.done);
  link.conn->queueWaitReport(2);
  std::vector<uint8_t> wire;
  for (int round = 0; round < 10000 && !s.done; ++round) {
    std::vector<uint8_t> more = link.drain(0);
    wire.insert(wire.end(), more.begin(), more.end());
    ASSERT_TRUE(link.pump().isOk());
  }
  ASSERT_TRUE(s.done);
  std::vector<uint8_t> rest = link.drain(0);
  wire.insert(wire.end(), rest.begin(), rest.end());

  size_t at = 0, payload = 0;
  int reports = 0;
  while (at < wire.size()) {
    socket::FrameHeader h;
    ASSERT_LE(at + sizeof(h), wire.size());
    std::memcpy(&h, wire.data() + at, sizeof(h));
    at += sizeof(h);
    if (h.magic == socket::kNoticeMagic) {
      EXPECT_EQ(h.messageBytes, socket::kWaitReport);
      EXPECT_EQ(h.seq, 2u);
      EXPECT_EQ(h.length, 0u);
      ++reports;
      continue;
    }
    ASSERT_EQ(h.magic, socket::kFrameMagic);
    ASSERT_EQ(h.offset, payload);
    ASSERT_LE(at + h.length, wire.size());
    EXPECT_EQ(std::memcmp(wire.data() + at, data.data() + h.offset, h.length), 0);
    payload += h.length;
    at += h.length;
  }
  EXPECT_EQ(reports, 1);
  EXPECT_EQ(payload, bytes);
}

}  // namespace
}  // namespace braid::transport
