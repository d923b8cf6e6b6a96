// Tests of the mixed transport (shm inside a host, sockets across hosts) with
// hosts simulated on this machine:
//   - the transport alone, on threads (LocalBootstrap): which link each peer
//     gets, that every pair exchanges messages in order through one drive loop
//     (so waitForActivity must wake for both kinds of traffic), that an abort
//     reaches peers on both links, and bad host maps; the socket transport's
//     peer selection; the host bootstrap view (records of different sizes per
//     host, a size mismatch named, calls kept in step);
//   - communicators through the public API with BRAID_HOST_ID (transport left
//     automatic, which must pick mixed across hosts): every collective, under
//     every algorithm, checked by the sweep against its reference.
// Forked ranks killed mid-collective: tests/multihost/mixed_fault.cc. Real
// network namespaces: tests/multihost (ctest -L multihost, root).
#include "transports/mixed/mixed_transport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/unique_id.h"
#include "comm/comm.h"
#include "support/drive_requests.h"
#include "support/local_bootstrap.h"
#include "support/sweep_runner.h"
#include "transports/mixed/host_bootstrap.h"
#include "transports/socket/socket_transport.h"

namespace braid::transport {
namespace {

using testing::expectAllOk;
using testing::LocalBootstrapGroup;

Config smallConfig() {
  Config c;
  c.timeoutSeconds = 20;
  c.shmSlotBytes = 4096;
  c.shmSlots = 4;
  return c;
}

std::vector<Status> runRanks(int nranks, const std::function<Status(int, Bootstrap&)>& fn) {
  LocalBootstrapGroup group(nranks, 20);
  return testing::statusesOnRankThreads(group, fn);
}

uint8_t patternByte(int from, int to, size_t i) {
  return static_cast<uint8_t>(from * 37 + to * 11 + i * 7 + (i >> 9));
}

// Progresses every connector until all `reqs` are done, sleeping in
// waitForActivity whenever nothing moved.
Status drive(Transport& t, int self, int nranks, const std::vector<Request>& reqs) {
  return braid::testing::driveRequests(t, braid::testing::peersExcept(self, nranks),
                                       braid::testing::pointersTo(reqs), 20);
}

// Hosts 0 and 1, interleaved, with a host of one rank (2): every kind of neighbour.
const std::vector<int> kHosts = {0, 1, 0, 1, 2, 1};

TEST(MixedTransport, ShmInsideAHostSocketsAcrossAndEveryPairExchanges) {
  const int n = static_cast<int>(kHosts.size());
  const size_t bytes = 3 * 4096 + 5;  // several shm slots and socket frames
  expectAllOk(runRanks(n, [&](int rank, Bootstrap& b) -> Status {
    BRAID_ASSIGN_OR_RETURN(auto t, createMixedTransport(b, smallConfig(), kHosts));
    EXPECT_STREQ(t->name(), "mixed");
    EXPECT_EQ(t->connector(rank), nullptr);
    EXPECT_EQ(t->connector(n), nullptr);
    EXPECT_EQ(linkTransportName(*t, rank), nullptr);
    for (int peer = 0; peer < n; ++peer) {
      if (peer == rank) continue;
      EXPECT_EQ(t->connector(peer)->peer(), peer) << "connectors are numbered by communicator rank";
      EXPECT_STREQ(linkTransportName(*t, peer), kHosts[peer] == kHosts[rank] ? "shm" : "socket")
          << "rank " << rank << " to " << peer;
    }
    // Every rank sends to and receives from every other, all at once.
    std::vector<std::vector<uint8_t>> out(n), in(n);
    std::vector<Request> reqs(2 * n);
    for (int peer = 0; peer < n; ++peer) {
      if (peer == rank) continue;
      out[peer].resize(bytes);
      for (size_t i = 0; i < bytes; ++i) out[peer][i] = patternByte(rank, peer, i);
      in[peer].assign(bytes, 0xEE);
      BRAID_RETURN_IF_ERROR(t->connector(peer)->postSend(out[peer].data(), bytes, &reqs[2 * peer]));
      BRAID_RETURN_IF_ERROR(
          t->connector(peer)->postRecv({in[peer].data()}, bytes, &reqs[2 * peer + 1]));
    }
    reqs[2 * rank].done = reqs[2 * rank + 1].done = true;
    BRAID_RETURN_IF_ERROR(drive(*t, rank, n, reqs));
    for (int peer = 0; peer < n; ++peer) {
      if (peer == rank) continue;
      for (size_t i = 0; i < bytes; ++i) {
        if (in[peer][i] != patternByte(peer, rank, i)) {
          return internalError("byte " + std::to_string(i) + " from rank " + std::to_string(peer) +
                               " is wrong");
        }
      }
    }
    return b.barrier();  // nobody closes while a peer still reads
  }));
}

TEST(MixedTransport, AbortReachesPeersOnBothLinksNamingTheAbortingRank) {
  // Rank 0 aborts; rank 1 (its host) and rank 2 (another host) wait on it.
  const std::vector<int> hosts = {0, 0, 1};
  std::vector<Status> results = runRanks(3, [&](int rank, Bootstrap& b) -> Status {
    BRAID_ASSIGN_OR_RETURN(auto t, createMixedTransport(b, smallConfig(), hosts));
    BRAID_RETURN_IF_ERROR(b.barrier());
    if (rank == 0) {
      t->abort(Status(braidInternalError, "mixed test abort"));
      return b.barrier();
    }
    uint8_t byte = 0;
    std::vector<Request> reqs(1);
    BRAID_RETURN_IF_ERROR(t->connector(0)->postRecv({&byte}, 1, &reqs[0]));
    Status s = drive(*t, rank, 3, reqs);
    BRAID_RETURN_IF_ERROR(b.barrier());
    return s;
  });
  EXPECT_TRUE(results[0].isOk()) << results[0].message();
  for (int rank : {1, 2}) {
    ASSERT_FALSE(results[rank].isOk()) << "rank " << rank << " did not see the abort";
    EXPECT_EQ(results[rank].code(), braidRemoteError) << results[rank].message();
    EXPECT_NE(results[rank].message().find("rank 0"), std::string::npos)
        << "rank " << rank << ": " << results[rank].message();
  }
}

TEST(MixedTransport, SocketSelectionConnectsOnlyTheSelectedPeers) {
  // Ranks 0,1 | 2,3: the selection the mixed transport makes ("another host").
  const std::vector<int> hosts = {0, 0, 1, 1};
  expectAllOk(runRanks(4, [&](int rank, Bootstrap& b) -> Status {
    std::vector<bool> remote(4);
    for (int r = 0; r < 4; ++r) remote[r] = hosts[r] != hosts[rank];
    BRAID_ASSIGN_OR_RETURN(auto t, createSocketTransport(b, smallConfig(), remote));
    for (int peer = 0; peer < 4; ++peer) {
      EXPECT_EQ(t->connector(peer) != nullptr, remote[peer]) << "rank " << rank << " to " << peer;
    }
    // One message each way to every selected peer.
    std::vector<uint8_t> out(4, static_cast<uint8_t>(rank)), in(4, 0xEE);
    std::vector<Request> reqs(8);
    for (int peer = 0; peer < 4; ++peer) {
      if (!remote[peer]) {
        reqs[2 * peer].done = reqs[2 * peer + 1].done = true;
        continue;
      }
      BRAID_RETURN_IF_ERROR(t->connector(peer)->postSend(&out[peer], 1, &reqs[2 * peer]));
      BRAID_RETURN_IF_ERROR(t->connector(peer)->postRecv({&in[peer]}, 1, &reqs[2 * peer + 1]));
    }
    Deadline deadline = Deadline::in(20);
    while (!std::all_of(reqs.begin(), reqs.end(), [](const Request& r) { return r.done; })) {
      for (int peer = 0; peer < 4; ++peer) {
        bool moved = false;
        if (remote[peer]) BRAID_RETURN_IF_ERROR(t->connector(peer)->progress(&moved));
      }
      if (deadline.expired()) return timeoutError("test: requests still pending");
      BRAID_RETURN_IF_ERROR(t->waitForActivity(deadline, 10));
    }
    for (int peer = 0; peer < 4; ++peer) {
      if (remote[peer]) {
        EXPECT_EQ(in[peer], peer) << "rank " << rank << " from " << peer;
      }
    }
    return b.barrier();
  }));
}

TEST(HostBootstrap, GathersPerHostWithHostLocalRanksAndStaysInStep) {
  const std::vector<int> hosts = {0, 1, 0, 1, 1};
  std::vector<Status> results = runRanks(5, [&](int rank, Bootstrap& b) -> Status {
    mixed::HostBootstrap view(b, hosts, "test-h" + std::to_string(hosts[rank]));
    const std::vector<int> members =
        hosts[rank] == 0 ? std::vector<int>{0, 2} : std::vector<int>{1, 3, 4};
    EXPECT_EQ(view.members(), members);
    EXPECT_EQ(view.nranks(), static_cast<int>(members.size()));
    // Hosts gather records of different sizes in the same call.
    const size_t bytes = 3 + hosts[rank];
    std::vector<uint8_t> data(bytes * members.size(), 0);
    for (size_t i = 0; i < bytes; ++i) data[view.rank() * bytes + i] = patternByte(rank, 0, i);
    BRAID_RETURN_IF_ERROR(view.allGather(data.data(), bytes));
    for (size_t local = 0; local < members.size(); ++local) {
      for (size_t i = 0; i < bytes; ++i) {
        EXPECT_EQ(data[local * bytes + i], patternByte(members[local], 0, i));
      }
    }
    // Rank 4 disagrees with its host about the size: host 1 fails naming it,
    // host 0 is unaffected, and everyone stays in step for the next call.
    const size_t odd = rank == 4 ? 9 : 2;
    std::vector<uint8_t> more(odd * members.size());
    Status mismatch = view.allGather(more.data(), odd);
    BRAID_RETURN_IF_ERROR(view.barrier());
    return mismatch;
  });
  EXPECT_TRUE(results[0].isOk()) << results[0].message();
  EXPECT_TRUE(results[2].isOk()) << results[2].message();
  for (int rank : {1, 3, 4}) {
    ASSERT_FALSE(results[rank].isOk()) << "rank " << rank;
    EXPECT_NE(results[rank].message().find("rank 4"), std::string::npos) << results[rank].message();
  }
}

TEST(MixedTransport, BadHostMapIsAnErrorNotACrash) {
  std::vector<Status> results = runRanks(2, [&](int, Bootstrap& b) -> Status {
    for (const std::vector<int>& hosts : {std::vector<int>{0}, std::vector<int>{0, 7}}) {
      auto t = createMixedTransport(b, smallConfig(), hosts);
      if (t.isOk()) return internalError("a bad host map was accepted");
      EXPECT_EQ(t.status().code(), braidInvalidArgument) << t.status().message();
    }
    return Status::ok();
  });
  expectAllOk(results);
}

// Through the communicator: BRAID_TRANSPORT unset picks mixed across hosts,
// shm on one host; BRAID_TRANSPORT=socket still forces sockets everywhere.
void expectTransport(const char* hostIds, const char* forced, const char* expected) {
  testing::ScopedEnv env(std::vector<std::pair<std::string, std::string>>{
      {"BRAID_HOST_ID", hostIds}, {"BRAID_TRANSPORT", forced}});
  braidUniqueId raw;
  ASSERT_EQ(braidGetUniqueId(&raw), braidSuccess);
  Result<bootstrap::UniqueId> id = bootstrap::UniqueId::readFrom(raw);
  ASSERT_TRUE(id.isOk()) << id.status().message();
  const int n = 4;
  std::vector<std::string> names(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      auto comm = Comm::create(*id, n, r, "");
      names[r] = comm.isOk() ? (*comm)->transport()->name() : comm.status().message();
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(names[r], expected) << "BRAID_HOST_ID=" << hostIds << " BRAID_TRANSPORT=" << forced;
  }
}

TEST(MixedTransport, ChosenAutomaticallyAcrossHosts) {
  expectTransport("a,a,b,b", "", "mixed");
  expectTransport("a,a,a,a", "", "shm");
  expectTransport("a,a,b,b", "socket", "socket");
  expectTransport("a,a,a,a", "mixed", "mixed");  // allowed: shm only, one host group
}

// (algorithm: "" = automatic, layout)
using MixedParam = std::tuple<std::string, std::string>;

class MixedSweepTest : public ::testing::TestWithParam<MixedParam> {};

TEST_P(MixedSweepTest, EveryCollectiveMatchesReference) {
  const auto& [algorithm, hostIds] = GetParam();
  const int nranks = static_cast<int>(std::count(hostIds.begin(), hostIds.end(), ',')) + 1;
  testing::SweepSpec spec;
  spec.collectives = testing::allCollectives();
  spec.largeCount = 70001;  // above the hierarchical threshold (64 KiB) at 1-byte types
  testing::SpawnOptions options;
  options.set("BRAID_TRANSPORT", "").set("BRAID_TIMEOUT", "60").set("BRAID_HOST_ID", hostIds);
  if (!algorithm.empty()) options.set("BRAID_ALGO", algorithm);
  testing::runSweepOnThreads(nranks, spec, options);
}

std::string mixedParamName(const ::testing::TestParamInfo<MixedParam>& info) {
  const auto& [algorithm, hostIds] = info.param;
  std::string layout;
  for (char c : hostIds) layout += c == ',' ? '_' : c;
  return (algorithm.empty() ? std::string("auto") : algorithm) + "_" + layout;
}

// Every algorithm on 2 hosts x 2 ranks (collectives an algorithm does not
// implement fall back to their default).
INSTANTIATE_TEST_SUITE_P(TwoByTwo, MixedSweepTest,
                         ::testing::Combine(::testing::Values("", "ring", "tree", "rd", "hier",
                                                              "hiertree", "pairwise", "direct"),
                                            ::testing::Values("a,a,b,b")),
                         mixedParamName);
// Interleaved hosts; uneven hosts with a host of one rank.
INSTANTIATE_TEST_SUITE_P(Interleaved, MixedSweepTest,
                         ::testing::Combine(::testing::Values("hier"),
                                            ::testing::Values("a,b,a,b")),
                         mixedParamName);
INSTANTIATE_TEST_SUITE_P(Uneven, MixedSweepTest,
                         ::testing::Combine(::testing::Values("hier", "hiertree"),
                                            ::testing::Values("a,b,b,c,c,c")),
                         mixedParamName);

}  // namespace
}  // namespace braid::transport
