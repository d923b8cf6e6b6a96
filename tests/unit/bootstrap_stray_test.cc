// The bootstrap root under attack, on real loopback sockets: while real ranks (threads)
// join, stray connections send garbage, half a message, a huge length, a hello MAC'd
// with the wrong secret, a replayed genuine hello, nothing at all, or come in a flood.
// The real ranks must still form the communicator (checked with an allGather), and
// every stray must receive nothing but the public challenge before its connection ends.
#include <gtest/gtest.h>
#include <poll.h>

#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "bootstrap/accept_loop.h"
#include "bootstrap/initiator.h"
#include "bootstrap/root_server.h"
#include "bootstrap/tcp_bootstrap.h"

namespace braid::bootstrap {
namespace {

namespace sock = transport::socket;
using wire::Bytes;

constexpr double kTimeoutSeconds = 60;  // generous: only a hang would reach it

// A communicator id whose root serves on 127.0.0.1 for `seconds`.
UniqueId startLoopbackRoot(double seconds = kTimeoutSeconds) {
  UniqueId id;
  EXPECT_TRUE(randomSecret(id.secret).isOk());
  auto any = sock::resolveHost("127.0.0.1", 0);
  SockAddr bound;
  Status s = startRootServer(*any, id.secret, seconds, &bound);
  EXPECT_TRUE(s.isOk()) << s.message();
  id.root = WireAddr::from(bound);
  return id;
}

Fd connectStray(const UniqueId& id) {
  auto fd = sock::connectTo(id.root.toSockAddr(), {}, Deadline::in(kTimeoutSeconds));
  EXPECT_TRUE(fd.isOk()) << fd.status().message();
  return fd.isOk() ? std::move(*fd) : Fd();
}

// Everything the peer sends until it closes (or the deadline passes).
Bytes drain(int fd) {
  Bytes got;
  Deadline deadline = Deadline::in(kTimeoutSeconds);
  uint8_t buffer[4096];
  while (!deadline.expired()) {
    if (!sock::waitForFd(fd, POLLIN, deadline, "stray").isOk()) break;
    auto r = sock::recvSome(fd, buffer, sizeof(buffer));
    if (!r.isOk() || r->closed) break;
    got.insert(got.end(), buffer, buffer + r->bytes);
  }
  return got;
}

// What a stray may learn: at most the challenge frame (a public nonce), nothing after it.
void expectOnlyAChallenge(const Bytes& got, const std::string& stray) {
  if (got.empty()) return;
  ASSERT_EQ(got.size(), wire::kHeaderBytes + wire::kNonceBytes) << stray << " learned more";
  EXPECT_TRUE(
      wire::parseHeader(wire::ByteSpan(got).first(wire::kHeaderBytes), wire::Kind::kRootChallenge)
          .isOk())
      << stray;
}

Bytes readChallenge(int fd) {
  auto c = readFrame(fd, wire::Kind::kRootChallenge, Deadline::in(kTimeoutSeconds));
  EXPECT_TRUE(c.isOk()) << c.status().message();
  return c.isOk() ? *c : Bytes();
}

void sendBytes(int fd, const Bytes& bytes) {
  // The root may already have hung up on a bad stray; that is the point, not a failure.
  (void)sock::sendAll(fd, bytes.data(), bytes.size(), Deadline::in(kTimeoutSeconds));
}

Bytes helloFor(const uint8_t* secret, const Bytes& challenge, int rank) {
  uint8_t nonce[wire::kNonceBytes] = {42};
  wire::RootHelloFields fields{
      .rank = rank, .nranks = 4, .listen = WireAddr::from(*sock::resolveHost("127.0.0.1", 9))};
  return makeHello(secret, kRootProtocol, challenge, nonce, wire::encodeFields(fields));
}

struct Stray {
  std::string name;
  std::function<void(const UniqueId&, int fd)> act;  // runs after connecting, then drains
};

std::vector<Stray> allStrays() {
  return {
      {"silent", [](const UniqueId&, int) {}},
      {"garbage",
       [](const UniqueId&, int fd) {
         Bytes junk(300);
         for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<uint8_t>(i * 131 + 7);
         sendBytes(fd, junk);
       }},
      {"half a message",
       [](const UniqueId& id, int fd) {
         Bytes hello = helloFor(id.secret, readChallenge(fd), 0);
         hello.resize(hello.size() / 2);
         sendBytes(fd, hello);
       }},
      {"huge length",
       [](const UniqueId&, int fd) {
         Bytes header = wire::encodeFrame(wire::Kind::kRootHello, {});
         header[8] = header[9] = header[10] = header[11] = 0xff;
         sendBytes(fd, header);
         sendBytes(fd, Bytes(64 * 1024, 0x55));
       }},
      {"wrong secret",
       [](const UniqueId& id, int fd) {
         uint8_t other[kSecretBytes];
         std::copy(id.secret, id.secret + kSecretBytes, other);
         other[0] ^= 1;
         sendBytes(fd, helloFor(other, readChallenge(fd), 0));
       }},
      {"replayed hello",
       [](const UniqueId& id, int fd) {
         // A genuine hello for rank 0, recorded from another connection's challenge: were it
         // accepted, rank 0 would be taken twice and the communicator would fail.
         Fd recorded = connectStray(id);
         Bytes genuine = helloFor(id.secret, readChallenge(recorded.get()), 0);
         readChallenge(fd);
         sendBytes(fd, genuine);
       }},
  };
}

// Runs `nranks` real ranks on threads, each checking an allGather of rank numbers.
void joinRealRanks(const UniqueId& id, int nranks) {
  std::vector<std::thread> ranks;
  std::vector<Status> results(nranks);
  for (int r = 0; r < nranks; ++r) {
    ranks.emplace_back([&, r] {
      auto b = TcpBootstrap::join(id, r, nranks, kTimeoutSeconds, "");
      if (!b.isOk()) {
        results[r] = b.status();
        return;
      }
      std::vector<int32_t> all(nranks, -1);
      all[r] = r * 10;
      results[r] = (*b)->allGather(all.data(), sizeof(int32_t));
      for (int k = 0; k < nranks && results[r].isOk(); ++k) {
        if (all[k] != k * 10) results[r] = internalError("allGather slot " + std::to_string(k));
      }
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < nranks; ++r)
    EXPECT_TRUE(results[r].isOk()) << r << ": " << results[r].message();
}

TEST(BootstrapStrays, RealRanksFormTheCommunicatorAndStraysGetNothing) {
  UniqueId id = startLoopbackRoot();
  std::vector<Stray> strays = allStrays();
  std::vector<Fd> fds;
  for (size_t i = 0; i < strays.size(); ++i) fds.push_back(connectStray(id));
  // Every stray acts while the root is still waiting for the real ranks (a replay sent
  // after the root is done would prove nothing), and stays connected while they join.
  std::vector<std::thread> acts;
  for (size_t i = 0; i < strays.size(); ++i) {
    acts.emplace_back([&, i] { strays[i].act(id, fds[i].get()); });
  }
  for (auto& t : acts) t.join();
  joinRealRanks(id, 4);
  for (size_t i = 0; i < strays.size(); ++i) {
    expectOnlyAChallenge(drain(fds[i].get()), strays[i].name);
  }
}

TEST(BootstrapStrays, AFloodOfSilentConnectionsDoesNotPreventAdmission) {
  UniqueId id = startLoopbackRoot();
  std::vector<Fd> flood;
  for (size_t i = 0; i < AcceptLoop::kMaxPending + 16; ++i) flood.push_back(connectStray(id));
  joinRealRanks(id, 4);
  for (Fd& fd : flood) expectOnlyAChallenge(drain(fd.get()), "flood");
}

TEST(BootstrapStrays, RankWithAnotherSecretIsRefusedWhileTheRealOnesJoin) {
  UniqueId id = startLoopbackRoot();
  UniqueId impostor = id;
  impostor.secret[5] ^= 0x80;
  Status impostorResult;
  std::thread t([&] {
    auto b = TcpBootstrap::join(impostor, 1, 2, kTimeoutSeconds, "");
    impostorResult = b.isOk() ? Status::ok() : b.status();
  });
  joinRealRanks(id, 2);
  t.join();  // the root hung up on it when it answered the real ranks
  EXPECT_EQ(impostorResult.code(), braidRemoteError) << impostorResult.message();
}

TEST(BootstrapJoin, WhatLeavesTheBootstrapIsDerivedNeverTheSecret) {
  UniqueId id = startLoopbackRoot();
  std::unique_ptr<TcpBootstrap> ranks[2];
  std::thread other(
      [&] { ranks[1] = std::move(*TcpBootstrap::join(id, 1, 2, kTimeoutSeconds, "job")); });
  auto first = TcpBootstrap::join(id, 0, 2, kTimeoutSeconds, "job");
  other.join();
  ASSERT_TRUE(first.isOk()) << first.status().message();
  ranks[0] = std::move(*first);
  ASSERT_TRUE(ranks[1]);
  // Same tag and transport key on every rank, neither showing any of the secret.
  EXPECT_EQ(ranks[0]->commTag(), ranks[1]->commTag());
  EXPECT_EQ(ranks[0]->commTag().rfind("job", 0), 0u);
  EXPECT_EQ(ranks[0]->commTag().find(toHex(id.secret, 4)), std::string::npos);
  EXPECT_EQ(std::memcmp(ranks[0]->secret(), ranks[1]->secret(), kSecretBytes), 0);
  EXPECT_NE(std::memcmp(ranks[0]->secret(), id.secret, kSecretBytes), 0);
  Digest expected = deriveFromSecret(id.secret, "braid transport key");
  EXPECT_EQ(std::memcmp(ranks[0]->secret(), expected.data(), kSecretBytes), 0);
}

TEST(BootstrapJoin, RootReportsDisagreementsToTheRanksItAdmitted) {
  // Genuine ranks that disagree (a misconfigured job) get the root's authenticated error,
  // not a hang: a duplicate rank, then a different nranks.
  struct Case {
    int rank[2];
    int nranks[2];
    std::string expected;
  };
  for (const Case& c : {Case{{0, 0}, {2, 2}, "two processes joined as rank 0"},
                        Case{{0, 1}, {2, 3}, "ranks disagree on nranks"}}) {
    UniqueId id = startLoopbackRoot();
    Status results[2];
    std::thread second([&] {
      auto b = TcpBootstrap::join(id, c.rank[1], c.nranks[1], kTimeoutSeconds, "");
      results[1] = b.isOk() ? Status::ok() : b.status();
    });
    auto b = TcpBootstrap::join(id, c.rank[0], c.nranks[0], kTimeoutSeconds, "");
    results[0] = b.isOk() ? Status::ok() : b.status();
    second.join();
    int told = 0;
    for (const Status& s : results) {
      EXPECT_FALSE(s.isOk()) << c.expected;
      if (s.code() == braidInvalidArgument && s.message().find(c.expected) != std::string::npos) {
        ++told;
      }
    }
    EXPECT_GE(told, 1) << c.expected << ": " << results[0].message() << " / "
                       << results[1].message();
  }
}

TEST(BootstrapJoin, SingleRankNeedsNoRing) {
  UniqueId id = startLoopbackRoot();
  auto b = TcpBootstrap::join(id, 0, 1, kTimeoutSeconds, "");
  ASSERT_TRUE(b.isOk()) << b.status().message();
  int32_t value = 7;
  EXPECT_TRUE((*b)->allGather(&value, sizeof(value)).isOk());
  EXPECT_TRUE((*b)->barrier().isOk());
}

TEST(BootstrapJoin, BadRankArgumentsAreRefusedBeforeAnyConnection) {
  UniqueId id = startLoopbackRoot(1);
  for (auto [rank, nranks] : {std::pair{0, 0}, {2, 2}, {-1, 3}, {0, wire::kMaxRanks + 1}}) {
    auto b = TcpBootstrap::join(id, rank, nranks, kTimeoutSeconds, "");
    ASSERT_FALSE(b.isOk());
    EXPECT_EQ(b.status().code(), braidInvalidArgument) << b.status().message();
  }
}

}  // namespace
}  // namespace braid::bootstrap
