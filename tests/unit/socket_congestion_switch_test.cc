// The per-message congestion control of same-host streams (congestion_switch.h):
//  - the choice: messages below 16 KiB leave a stream alone, 16 KiB up to below
//    512 KiB run bbr, 512 KiB and more reno; only "auto" (or unset) on a
//    same-host stream switches, never "system", a name, or a stream between hosts;
//  - on a real loopback stream, what the kernel reports (getsockopt(TCP_CONGESTION))
//    after each message class, and that a switch that is off never touches it;
//  - a name the kernel refuses turns the switch off and leaves reno;
//  - two connectors over a loopback TCP pair deliver messages of both classes
//    intact under "auto", the sender's stream switching between them, and leave
//    the stream alone under "system" and under a name.
// Tests that need bbr skip where the kernel does not let this process set it.
#include <gtest/gtest.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/net/socket_util.h"
#include "support/loopback_pair.h"
#include "transports/socket/congestion.h"
#include "transports/socket/congestion_switch.h"
#include "transports/socket/socket_connector.h"

namespace braid::transport::socket {
namespace {

using testing::congestionOf;
using testing::connectLoopback;
using testing::LoopbackPair;

constexpr size_t kKiB = 1024;

TEST(SocketCongestionSwitchChoice, FollowsTheMessageSize) {
  EXPECT_EQ(congestionForMessage(0), nullptr);
  EXPECT_EQ(congestionForMessage(8), nullptr);
  EXPECT_EQ(congestionForMessage(16 * kKiB - 1), nullptr);
  EXPECT_STREQ(congestionForMessage(16 * kKiB), "bbr");
  EXPECT_STREQ(congestionForMessage(256 * kKiB), "bbr");
  EXPECT_STREQ(congestionForMessage(512 * kKiB - 1), "bbr");
  EXPECT_STREQ(congestionForMessage(512 * kKiB), "reno");
  EXPECT_STREQ(congestionForMessage(size_t{1} << 30), "reno");
  EXPECT_STREQ(congestionForMessage(64 * kKiB, "cubic"), "cubic");
}

TEST(SocketCongestionSwitchChoice, OnlyAutoWithinAHostSwitches) {
  EXPECT_TRUE(switchesPerMessage("auto", true));
  EXPECT_TRUE(switchesPerMessage("", true));
  EXPECT_FALSE(switchesPerMessage("auto", false));
  EXPECT_FALSE(switchesPerMessage("", false));
  EXPECT_FALSE(switchesPerMessage("system", true));
  EXPECT_FALSE(switchesPerMessage("reno", true));
  EXPECT_FALSE(switchesPerMessage("bbr", true));
}

// Whether this process may set bbr on a stream (built and allowed).
bool bbrSettable() {
  LoopbackPair pair = connectLoopback(/*nonBlocking=*/true);
  const char* name = kSameHostShortCongestion;
  return ::setsockopt(pair.ends[0].get(), IPPROTO_TCP, TCP_CONGESTION, name,
                      static_cast<socklen_t>(std::strlen(name))) == 0;
}

TEST(SocketCongestionSwitch, SwitchesByMessageClassOnALoopbackStream) {
  if (!bbrSettable()) GTEST_SKIP() << "this kernel does not let the process set bbr";
  LoopbackPair pair = connectLoopback(/*nonBlocking=*/true);
  const int fd = pair.ends[0].get();
  ASSERT_TRUE(applyCongestionControl(fd, "auto").isOk());
  ASSERT_EQ(congestionOf(fd), "reno");
  CongestionSwitch sw(true);
  sw.beforeMessage(fd, 8);  // too small to switch
  EXPECT_EQ(congestionOf(fd), "reno");
  sw.beforeMessage(fd, 256 * kKiB);
  EXPECT_EQ(congestionOf(fd), "bbr");
  EXPECT_STREQ(sw.current(), "bbr");
  sw.beforeMessage(fd, 100);  // small messages leave it as it is
  EXPECT_EQ(congestionOf(fd), "bbr");
  sw.beforeMessage(fd, 512 * kKiB);
  EXPECT_EQ(congestionOf(fd), "reno");
  sw.beforeMessage(fd, 16 * kKiB);
  EXPECT_EQ(congestionOf(fd), "bbr");
  sw.beforeMessage(fd, 8 << 20);
  EXPECT_EQ(congestionOf(fd), "reno");
  EXPECT_TRUE(sw.on());
}

TEST(SocketCongestionSwitch, OffNeverTouchesTheStream) {
  LoopbackPair pair = connectLoopback(/*nonBlocking=*/true);
  const int fd = pair.ends[0].get();
  const std::string before = congestionOf(fd);
  CongestionSwitch sw;
  for (size_t bytes : {size_t{8}, 64 * kKiB, size_t{4} << 20}) {
    sw.beforeMessage(fd, bytes);
    EXPECT_EQ(congestionOf(fd), before) << bytes;
  }
  EXPECT_FALSE(sw.on());
}

TEST(SocketCongestionSwitch, ARefusedNameTurnsItOffAndLeavesReno) {
  LoopbackPair pair = connectLoopback(/*nonBlocking=*/true);
  const int fd = pair.ends[0].get();
  ASSERT_TRUE(applyCongestionControl(fd, "auto").isOk());
  CongestionSwitch sw(true, "nosuchcc");
  sw.beforeMessage(fd, 64 * kKiB);
  EXPECT_EQ(congestionOf(fd), "reno");
  EXPECT_FALSE(sw.on());
  EXPECT_STREQ(sw.current(), "reno");
  sw.beforeMessage(fd, 2 << 20);
  sw.beforeMessage(fd, 64 * kKiB);
  EXPECT_EQ(congestionOf(fd), "reno");
}

std::vector<uint8_t> pattern(size_t n, unsigned seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 131 + seed * 7 + (i >> 11));
  return v;
}

// Two connectors (ranks 0 and 1) over a loopback pair, both set up as the transport
// sets up its streams under `setting`.
struct Link {
  LoopbackPair pair = connectLoopback(/*nonBlocking=*/true);
  AbortState abort;
  int senderFd = pair.ends[0].get();
  std::unique_ptr<SocketConnector> conns[2];

  explicit Link(const std::string& setting) {
    for (int r = 0; r < 2; ++r) {
      EXPECT_TRUE(applyCongestionControl(pair.ends[r].get(), setting).isOk());
      std::vector<Fd> streams;
      streams.push_back(std::move(pair.ends[r]));
      conns[r] = std::make_unique<SocketConnector>(r, 1 - r, 2, std::move(streams), &abort);
      conns[r]->switchCongestionPerMessage(setting);
    }
  }

  // Sends `bytes` from rank 0 to rank 1; returns what arrived.
  std::vector<uint8_t> carry(const std::vector<uint8_t>& bytes) {
    std::vector<uint8_t> got(bytes.size(), 0);
    Request send, recv;
    EXPECT_TRUE(conns[0]->postSend(bytes.data(), bytes.size(), &send).isOk());
    RecvSink sink;
    sink.dst = got.data();
    EXPECT_TRUE(conns[1]->postRecv(sink, got.size(), &recv).isOk());
    Deadline deadline = Deadline::in(60);
    while (!(send.done && recv.done) && !deadline.expired()) {
      for (auto& conn : conns) {
        bool progressed = false;
        EXPECT_TRUE(conn->progress(&progressed).isOk());
      }
    }
    EXPECT_TRUE(send.done && recv.done) << "message of " << bytes.size() << " B did not arrive";
    return got;
  }
};

TEST(SocketCongestionSwitch, AutoConnectorsSwitchPerMessageAndDeliverIntact) {
  if (!bbrSettable()) GTEST_SKIP() << "this kernel does not let the process set bbr";
  Link link("auto");
  EXPECT_EQ(congestionOf(link.senderFd), "reno");
  int seed = 0;
  for (size_t bytes : {256 * kKiB, size_t{1} << 20, 100 * kKiB + 3, size_t{5}}) {
    const std::vector<uint8_t> data = pattern(bytes, ++seed);
    EXPECT_EQ(link.carry(data), data) << bytes;
    const char* expected = bytes >= 512 * kKiB ? "reno" : "bbr";  // 5 B leaves bbr
    EXPECT_EQ(congestionOf(link.senderFd), expected) << bytes;
  }
}

TEST(SocketCongestionSwitch, SystemAndANameLeaveTheStreamAlone) {
  for (const char* setting : {"system", "reno"}) {
    Link link(setting);
    const std::string before = congestionOf(link.senderFd);
    int seed = 0;
    for (size_t bytes : {256 * kKiB, size_t{1} << 20}) {
      const std::vector<uint8_t> data = pattern(bytes, ++seed);
      EXPECT_EQ(link.carry(data), data) << setting << " " << bytes;
      EXPECT_EQ(congestionOf(link.senderFd), before) << setting << " " << bytes;
    }
  }
}

}  // namespace
}  // namespace braid::transport::socket
