// The bootstrap's links over TLS (BRAID_SOCKET_TLS=1), ranks as threads on loopback:
//  - 2, 3 and 4 ranks join, and allGather (small and multi-record payloads) and barrier
//    return every rank's data over TLS;
//  - a rank with another secret is refused while the real ranks join; two ends of a link
//    holding different keys both fail the handshake, each naming the other;
//  - a plain rank among TLS ranks, and a TLS rank among plain ranks, are refused by the
//    root on every rank, with a sentence naming the rank and BRAID_SOCKET_TLS;
//  - a forged record written onto a ring link behind TLS's back fails the receiver, which
//    names the sender, and every other rank then fails too (not at the deadline), naming
//    the neighbour it lost.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/link.h"
#include "bootstrap/root_server.h"
#include "bootstrap/tcp_bootstrap.h"
#include "support/spawn.h"

namespace braid::bootstrap {
namespace {

namespace sock = transport::socket;

constexpr double kTimeoutSeconds = 30;  // only a hang reaches it

UniqueId startLoopbackRoot() {
  UniqueId id;
  EXPECT_TRUE(randomSecret(id.secret).isOk());
  auto any = sock::resolveHost("127.0.0.1", 0);
  SockAddr bound;
  Status s = startRootServer(*any, id.secret, kTimeoutSeconds, &bound);
  EXPECT_TRUE(s.isOk()) << s.message();
  id.root = WireAddr::from(bound);
  return id;
}

// Joins `nranks` ranks of `id` on threads (rank r with TLS when tls(r)), runs body on each
// that joined, and returns every rank's Status.
std::vector<Status> joinAndRun(
    const UniqueId& id, int nranks, const std::function<bool(int)>& tls,
    const std::function<Status(int, TcpBootstrap&)>& body = [](int, TcpBootstrap&) {
      return Status::ok();
    }) {
  std::vector<Status> results(nranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r) {
    threads.emplace_back([&, r] {
      auto b = TcpBootstrap::join(id, r, nranks, kTimeoutSeconds, "", tls(r));
      results[r] = b.isOk() ? body(r, **b) : b.status();
    });
  }
  for (auto& t : threads) t.join();
  return results;
}

// Every rank contributes `bytes` of a pattern of its own; all must arrive intact.
Status checkAllGather(int rank, TcpBootstrap& b, size_t bytes) {
  const auto byteOf = [](int r, size_t i) { return static_cast<uint8_t>(r * 37 + i * 13 + 1); };
  std::vector<uint8_t> all(bytes * b.nranks(), 0);
  for (size_t i = 0; i < bytes; ++i) all[rank * bytes + i] = byteOf(rank, i);
  BRAID_RETURN_IF_ERROR(b.allGather(all.data(), bytes));
  for (int r = 0; r < b.nranks(); ++r) {
    for (size_t i = 0; i < bytes; ++i) {
      if (all[r * bytes + i] != byteOf(r, i)) {
        return internalError("allGather: byte " + std::to_string(i) + " of rank " +
                             std::to_string(r) + " is wrong");
      }
    }
  }
  return b.barrier();
}

void expectAllOk(const std::vector<Status>& results) {
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_TRUE(results[r].isOk()) << "rank " << r << ": " << results[r].message();
  }
}

TEST(BootstrapTls, RanksJoinAndGatherOverTls) {
  for (int nranks : {2, 3, 4}) {
    SCOPED_TRACE(std::to_string(nranks) + " ranks");
    UniqueId id = startLoopbackRoot();
    expectAllOk(joinAndRun(
        id, nranks, [](int) { return true; },
        [](int rank, TcpBootstrap& b) -> Status {
          if (!b.tls()) return internalError("the bootstrap runs without TLS");
          BRAID_RETURN_IF_ERROR(checkAllGather(rank, b, 4));
          return checkAllGather(rank, b, (100 << 10) + 3);  // several records per step
        }));
  }
}

TEST(BootstrapTls, ARankWithAnotherSecretIsRefusedWhileTheRealOnesJoin) {
  UniqueId id = startLoopbackRoot();
  UniqueId impostor = id;
  impostor.secret[3] ^= 0x10;
  Status impostorResult;
  std::thread t([&] {
    auto b = TcpBootstrap::join(impostor, 1, 2, kTimeoutSeconds, "", /*tls=*/true);
    impostorResult = b.isOk() ? Status::ok() : b.status();
  });
  expectAllOk(joinAndRun(
      id, 2, [](int) { return true; },
      [](int rank, TcpBootstrap& b) { return checkAllGather(rank, b, 8); }));
  t.join();
  EXPECT_EQ(impostorResult.code(), braidRemoteError) << impostorResult.message();
  EXPECT_NE(impostorResult.message().find("the bootstrap root at"), std::string::npos)
      << impostorResult.message();
}

TEST(BootstrapTls, EndsWithDifferentKeysBothFailNamingEachOther) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  Link client{Fd(fds[0])}, server{Fd(fds[1])};
  std::array<uint8_t, 32> key{}, other{};
  key.fill(3);
  other.fill(3);
  other[31] ^= 1;
  Status atServer;
  std::thread t([&] { atServer = server.startTls(false, other, Deadline::in(10), "rank 0", 0); });
  Status atClient = client.startTls(true, key, Deadline::in(10), "rank 1", 1);
  t.join();
  EXPECT_EQ(atClient.code(), braidRemoteError) << atClient.message();
  EXPECT_EQ(atClient.peer(), 1);
  EXPECT_NE(atClient.message().find("TLS with rank 1 failed"), std::string::npos)
      << atClient.message();
  EXPECT_EQ(atServer.code(), braidRemoteError) << atServer.message();
  EXPECT_EQ(atServer.peer(), 0);
  EXPECT_NE(atServer.message().find("TLS with rank 0 failed"), std::string::npos)
      << atServer.message();
}

TEST(BootstrapTls, ALinkWithTheSameKeyCarriesDataBothWays) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  Link client{Fd(fds[0])}, server{Fd(fds[1])};
  std::array<uint8_t, 32> key{};
  key.fill(5);
  Status atServer;
  std::thread t([&] { atServer = server.startTls(false, key, Deadline::in(10), "rank 0", 0); });
  ASSERT_TRUE(client.startTls(true, key, Deadline::in(10), "rank 1", 1).isOk());
  t.join();
  ASSERT_TRUE(atServer.isOk()) << atServer.message();
  EXPECT_TRUE(client.tls() && server.tls());
  std::vector<uint8_t> out(70000), in(out.size() + 1, 0xEE);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 7);
  Status sent;
  std::thread sender([&] { sent = client.sendAll(out.data(), out.size(), Deadline::in(10)); });
  ASSERT_TRUE(server.recvAll(in.data(), out.size(), Deadline::in(10)).isOk());
  sender.join();
  ASSERT_TRUE(sent.isOk()) << sent.message();
  EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin()));
  EXPECT_EQ(in[out.size()], 0xEE);
}

// Every rank hears of the odd one out from the root, in one sentence naming it.
void expectDisagreementOnEveryRank(const std::vector<Status>& results, const std::string& says) {
  for (size_t r = 0; r < results.size(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(results[r].code(), braidInvalidUsage) << results[r].message();
    EXPECT_NE(results[r].message().find("BRAID_SOCKET_TLS"), std::string::npos)
        << results[r].message();
    EXPECT_NE(results[r].message().find(says), std::string::npos) << results[r].message();
  }
}

TEST(BootstrapTls, APlainRankAmongTlsRanksIsRefusedOnEveryRank) {
  UniqueId id = startLoopbackRoot();
  expectDisagreementOnEveryRank(joinAndRun(id, 3, [](int r) { return r != 2; }),
                                "rank 0 runs the bootstrap with TLS (BRAID_SOCKET_TLS=1), "
                                "rank(s) 2 without TLS");
}

TEST(BootstrapTls, ATlsRankAmongPlainRanksIsRefusedOnEveryRank) {
  UniqueId id = startLoopbackRoot();
  expectDisagreementOnEveryRank(joinAndRun(id, 4, [](int r) { return r == 1 || r == 3; }),
                                "rank 0 runs the bootstrap without TLS, rank(s) 1, 3 with TLS");
}

// Rank 0 writes a forged application-data record onto its link to rank 1 behind TLS's
// back. Rank 1 must reject it (naming rank 0) instead of delivering it, and cut its links;
// the others then fail at once with an error naming a neighbour, not at the deadline.
// The links keep their records in OpenSSL (BRAID_SOCKET_KTLS=0): where the kernel does a
// socket's sends, whatever is written on it becomes a genuine record.
TEST(BootstrapTls, AForgedRecordFailsTheLinkAndEveryRankHearsOfIt) {
  testing::ScopedEnv openSslRecords("BRAID_SOCKET_KTLS", "0");
  UniqueId id = startLoopbackRoot();
  auto results = joinAndRun(
      id, 3, [](int) { return true; },
      [](int rank, TcpBootstrap& b) -> Status {
        if (rank == 0) {
          uint8_t record[5 + 40] = {0x17, 0x03, 0x03, 0x00, 40};  // type, version, length
          for (size_t i = 5; i < sizeof(record); ++i) record[i] = static_cast<uint8_t>(i * 29);
          if (::send(b.nextFdForTesting(), record, sizeof(record), MSG_NOSIGNAL) !=
              static_cast<ssize_t>(sizeof(record))) {
            return internalError("test: could not inject the record");
          }
        }
        Status s = checkAllGather(rank, b, 64);
        return s.isOk() ? internalError("test: the allGather completed") : s;
      });
  EXPECT_EQ(results[1].code(), braidRemoteError) << results[1].message();
  EXPECT_EQ(results[1].peer(), 0) << results[1].message();
  EXPECT_NE(results[1].message().find("record was rejected"), std::string::npos)
      << results[1].message();
  EXPECT_EQ(results[2].code(), braidRemoteError) << results[2].message();
  EXPECT_EQ(results[2].peer(), 1) << results[2].message();
  EXPECT_EQ(results[0].code(), braidRemoteError) << results[0].message();
  EXPECT_TRUE(results[0].peer() == 1 || results[0].peer() == 2) << results[0].message();
}

}  // namespace
}  // namespace braid::bootstrap
