// The handshake over real loopback sockets: AcceptLoop (the responder, as ring listeners
// and the root run it) against genuine initiators and strays, and initiateHandshake (the
// connecting rank) against responders that do not know the secret or misbehave. Both
// directions must authenticate, and no misbehaving peer may crash or block the other side.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cerrno>
#include <thread>
#include <vector>

#include "bootstrap/accept_loop.h"
#include "bootstrap/initiator.h"

namespace braid::bootstrap {
namespace {

namespace sock = transport::socket;
using wire::Bytes;

constexpr double kLongSeconds = 600;  // deadlines no passing test comes near
const uint8_t kSecret[kSecretBytes] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6};
const uint8_t kWrongSecret[kSecretBytes] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 7};

sock::Listener loopbackListener() {
  auto address = sock::resolveHost("127.0.0.1", 0);
  auto listener = sock::listenOn(*address, {});
  EXPECT_TRUE(listener.isOk()) << listener.status().message();
  return std::move(*listener);
}

Fd connectTo(const sock::Listener& listener) {
  auto fd = sock::connectTo(listener.address, {}, Deadline::in(kLongSeconds));
  EXPECT_TRUE(fd.isOk()) << fd.status().message();
  return std::move(*fd);
}

Bytes ringHelloFields(int rank) { return wire::encodeFields(wire::RingHelloFields{rank}); }

// True when the peer has closed `fd` (EOF or reset), false while it is still open and silent.
bool closedByPeer(int fd) {
  uint8_t buffer[64];
  while (true) {
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n > 0) continue;  // the challenge, already sent
    return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
  }
}

TEST(BootstrapHandshake, GenuineInitiatorsAreAdmittedAroundSilentAndHalfStrays) {
  sock::Listener listener = loopbackListener();
  // Strays first, each with a 600 s allowance: a responder that served connections one
  // at a time would still be waiting on them when the test's 60 s deadline passed.
  Fd silent = connectTo(listener);
  Fd half = connectTo(listener);
  Bytes header =
      wire::encodeFrame(wire::Kind::kRingHello,
                        Bytes(wire::kNonceBytes + wire::kRingHelloFieldBytes + wire::kMacBytes, 0));
  ASSERT_TRUE(sock::sendAll(half.get(), header.data(), 20, Deadline::in(10)).isOk());

  AcceptLoop loop(listener.fd.get(), kSecret, kRingProtocol, "test", kLongSeconds);
  constexpr int kInitiators = 3;
  std::vector<Status> results(kInitiators);
  std::vector<std::thread> initiators;
  for (int r = 0; r < kInitiators; ++r) {
    initiators.emplace_back([&, r] {
      Link link{connectTo(listener)};
      auto proof = initiateHandshake(link, kSecret, kRingProtocol, ringHelloFields(r),
                                     Deadline::in(60), "the test responder");
      results[r] = proof.isOk() ? Status::ok() : proof.status();
    });
  }
  std::vector<bool> seen(kInitiators, false);
  for (int i = 0; i < kInitiators; ++i) {
    auto conn = loop.next(Deadline::in(60));
    ASSERT_TRUE(conn.isOk()) << conn.status().message();
    auto hello = wire::parseRingHelloFields(conn->fields);
    ASSERT_TRUE(hello.isOk());
    seen[hello->rank] = true;
    Bytes proof = makeAnswer(kSecret, kRingProtocol, conn->transcript, {});
    ASSERT_TRUE(sock::sendAll(conn->fd.get(), proof.data(), proof.size(), Deadline::in(60)).isOk());
  }
  for (auto& t : initiators) t.join();
  for (int r = 0; r < kInitiators; ++r) {
    EXPECT_TRUE(seen[r]) << r;
    EXPECT_TRUE(results[r].isOk()) << r << ": " << results[r].message();
  }
  EXPECT_FALSE(closedByPeer(silent.get())) << "the silent stray is still pending, not served";
  EXPECT_FALSE(closedByPeer(half.get()));
  EXPECT_EQ(loop.rejected(), 0);
}

TEST(BootstrapHandshake, FloodDropsTheOldestPendingAndStillAdmits) {
  sock::Listener listener = loopbackListener();
  AcceptLoop loop(listener.fd.get(), kSecret, kRingProtocol, "test", kLongSeconds);
  std::vector<Fd> flood;
  for (size_t i = 0; i < AcceptLoop::kMaxPending + 8; ++i) flood.push_back(connectTo(listener));
  Status result;
  std::thread initiator([&] {
    Link link{connectTo(listener)};
    auto proof = initiateHandshake(link, kSecret, kRingProtocol, ringHelloFields(0),
                                   Deadline::in(60), "the test responder");
    result = proof.isOk() ? Status::ok() : proof.status();
  });
  auto conn = loop.next(Deadline::in(60));
  ASSERT_TRUE(conn.isOk()) << conn.status().message();
  Bytes proof = makeAnswer(kSecret, kRingProtocol, conn->transcript, {});
  ASSERT_TRUE(sock::sendAll(conn->fd.get(), proof.data(), proof.size(), Deadline::in(60)).isOk());
  initiator.join();
  EXPECT_TRUE(result.isOk()) << result.message();
  EXPECT_TRUE(closedByPeer(flood.front().get())) << "the oldest was dropped to make room";
  EXPECT_FALSE(closedByPeer(flood.back().get())) << "the newest is still pending";
  EXPECT_GE(loop.rejected(), 8);
}

TEST(BootstrapHandshake, ResponderWithoutTheSecretIsNotTrusted) {
  sock::Listener listener = loopbackListener();
  std::thread impostor([&] {
    // A responder that speaks the protocol but MACs its answer with another secret.
    auto fd = sock::acceptOne(listener.fd.get(), Deadline::in(60));
    ASSERT_TRUE(fd.isOk());
    Transcript t;
    uint8_t nonce[wire::kNonceBytes] = {};
    t.challenge = makeChallenge(kRingProtocol, nonce);
    ASSERT_TRUE(
        sock::sendAll(fd->get(), t.challenge.data(), t.challenge.size(), Deadline::in(60)).isOk());
    auto hello = readFrame(fd->get(), wire::Kind::kRingHello, Deadline::in(60));
    ASSERT_TRUE(hello.isOk());
    t.hello = *hello;
    EXPECT_FALSE(verifyHello(kWrongSecret, kRingProtocol, t).isOk()) << "it cannot check us";
    Bytes answer = makeAnswer(kWrongSecret, kRingProtocol, t, {});
    (void)sock::sendAll(fd->get(), answer.data(), answer.size(), Deadline::in(60));
  });
  Link link{connectTo(listener)};
  auto proof = initiateHandshake(link, kSecret, kRingProtocol, ringHelloFields(1), Deadline::in(60),
                                 "the impostor");
  impostor.join();
  ASSERT_FALSE(proof.isOk());
  EXPECT_EQ(proof.status().code(), braidRemoteError);
  EXPECT_NE(proof.status().message().find("did not prove"), std::string::npos)
      << proof.status().message();
}

TEST(BootstrapHandshake, InitiatorRefusesMalformedOrSilentResponders) {
  struct Case {
    std::string name;
    Bytes sent;  // what the fake responder sends, then it stays silent
    braidResult_t expected;
  };
  Bytes huge = wire::encodeFrame(wire::Kind::kRingChallenge, Bytes(16, 0));
  huge[11] = 0x7f;
  std::vector<Case> cases = {
      {"garbage", Bytes(40, 0xab), braidRemoteError},
      {"huge length", huge, braidRemoteError},
      {"half a challenge", Bytes(huge.begin(), huge.begin() + 6), braidTimeout},
      {"silence", {}, braidTimeout},
  };
  for (const Case& c : cases) {
    sock::Listener listener = loopbackListener();
    Link link{connectTo(listener)};
    auto server = sock::acceptOne(listener.fd.get(), Deadline::in(60));
    ASSERT_TRUE(server.isOk());
    if (!c.sent.empty()) {
      ASSERT_TRUE(
          sock::sendAll(server->get(), c.sent.data(), c.sent.size(), Deadline::in(60)).isOk());
    }
    auto proof = initiateHandshake(link, kSecret, kRingProtocol, ringHelloFields(0),
                                   Deadline::in(0.5), "the fake responder");
    ASSERT_FALSE(proof.isOk()) << c.name;
    EXPECT_EQ(proof.status().code(), c.expected) << c.name << ": " << proof.status().message();
  }
}

TEST(BootstrapHandshake, NoConnectionAtAllTimesOutWithAClearError) {
  sock::Listener listener = loopbackListener();
  AcceptLoop loop(listener.fd.get(), kSecret, kRingProtocol, "test ring listener");
  auto conn = loop.next(Deadline::in(0.2));
  ASSERT_FALSE(conn.isOk());
  EXPECT_EQ(conn.status().code(), braidTimeout);
  EXPECT_NE(conn.status().message().find("test ring listener"), std::string::npos);
}

}  // namespace
}  // namespace braid::bootstrap
