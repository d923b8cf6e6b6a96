// Failures and lifetime of the device proxy (src/comm/device_proxy/) on the CPU fake
// stream (tests/support/fake_stream_ops.h), over real shm and socket transports: a stream
// failure on one rank, or a failed host collective, fails every rank — async error and
// next call — and releases every stream, long before BRAID_TIMEOUT; destroy runs the
// calls still queued; abort with a peer absent releases the stream; nothing leaks.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "api/guard.h"
#include "comm/device_proxy/proxy_hooks.h"
#include "support/fake_proxy.h"
#include "support/fake_stream_ops.h"
#include "support/proxy_calls.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

using api::toComm;
using coll::CollKind;
using Clock = std::chrono::steady_clock;

// A failure must reach every rank through the transport's abort, long before BRAID_TIMEOUT.
constexpr int kTimeoutSeconds = 60;
constexpr double kFailsWithinSeconds = 30;

TEST(DeviceProxyFaults, AStreamFailureFailsEveryRank) {
  const auto start = Clock::now();
  spawn(
      3,
      [](braidComm_t comm, int rank) {
        const size_t count = 3000;
        auto ops = std::make_shared<FakeStreamOps>();
        // The second call's first copy to the host (the first call is 3 pieces).
        if (rank == 1) ops->failCopyToHost(4);
        ASSERT_TRUE(attachFakeProxy(comm, ops).isOk());
        FakeStream stream;
        std::vector<std::vector<int32_t>> in, out;
        for (int c = 0; c < 4; ++c) {
          in.push_back(proxyInputs(rank, count, c));
          out.emplace_back(count, kProxyPoison);
        }
        for (int c = 0; c < 4; ++c) {
          Status s = enqueueOnFake(proxyCollective(comm, CollKind::kAllReduce, "allreduce",
                                                   in[c].data(), out[c].data(), count),
                                   stream);
          // The failure is asynchronous: it may or may not be seen by a later call.
          if (c == 0) {
            EXPECT_TRUE(s.isOk()) << "rank " << rank << ": " << s.message();
          }
        }
        expectFailedEverywhere(comm, rank, stream, rank == 1);
        // Rank 1's stream failed only after its first call had finished (its copy back waits
        // for that); the peers may still have been inside that call when the abort came.
        if (rank == 1) {
          EXPECT_EQ(proxyMismatches(out[0], [](size_t i) { return proxySum(3, i, 0); }), "")
              << "rank 1: the call before the failure";
        }
      },
      SpawnOptions::withTransport("shm", kTimeoutSeconds));
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), kFailsWithinSeconds);
}

TEST(DeviceProxyFaults, AFailedHostCollectiveFailsEveryRank) {
  const auto start = Clock::now();
  // BRAID_CHECK compares the ranks' calls: rank 1 passes another count, so the host
  // collective fails on both ranks, and the call queued behind it must fail too.
  spawn(
      2,
      [](braidComm_t comm, int rank) {
        auto ops = std::make_shared<FakeStreamOps>();
        ASSERT_TRUE(attachFakeProxy(comm, ops).isOk());
        FakeStream stream;
        const size_t count = 2000 + rank;
        std::vector<int32_t> a = proxyInputs(rank, count, 1), b = proxyInputs(rank, 2000, 2);
        EXPECT_TRUE(enqueueOnFake(proxyCollective(comm, CollKind::kAllReduce, "allreduce", a.data(),
                                                  a.data(), count),
                                  stream)
                        .isOk());
        (void)enqueueOnFake(
            proxyCollective(comm, CollKind::kAllReduce, "allreduce", b.data(), b.data(), 2000),
            stream);
        expectFailedEverywhere(comm, rank, stream, false);
      },
      SpawnOptions::withTransport("socket", kTimeoutSeconds).set("BRAID_CHECK", "1"));
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), kFailsWithinSeconds);
}

TEST(DeviceProxyLifetime, DestroyRunsTheQueuedCalls) {
  std::vector<braidComm_t> comms = initRanks(2, SpawnOptions::withTransport("shm", 60));
  ASSERT_EQ(comms.size(), 2u);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      auto ops = std::make_shared<FakeStreamOps>();
      ASSERT_TRUE(attachFakeProxy(comms[rank], ops).isOk());
      FakeStream stream;
      const size_t count = 10000;
      std::vector<std::vector<int32_t>> bufs;
      for (int c = 0; c < 3; ++c) bufs.push_back(proxyInputs(rank, count, c));
      stream.closeGate();
      for (int c = 0; c < 3; ++c) {
        EXPECT_TRUE(enqueueOnFake(proxyCollective(comms[rank], CollKind::kAllReduce, "allreduce",
                                                  bufs[c].data(), bufs[c].data(), count),
                                  stream)
                        .isOk());
      }
      // Destroy with all three queued and the stream held: it must wait for them.
      std::thread opener([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        stream.open();
      });
      EXPECT_EQ(braidCommDestroy(comms[rank]), braidSuccess);
      opener.join();
      EXPECT_TRUE(stream.synchronize().isOk());
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(proxyMismatches(bufs[c], [c](size_t i) { return proxySum(2, i, c); }), "")
            << "rank " << rank << " call " << c;
      }
      EXPECT_EQ(ops->liveAllocations(), 0) << "rank " << rank;
    });
  }
  for (auto& t : ranks) t.join();
}

TEST(DeviceProxyLifetime, AbortReleasesTheStream) {
  std::vector<braidComm_t> comms =
      initRanks(2, SpawnOptions::withTransport("socket", kTimeoutSeconds));
  ASSERT_EQ(comms.size(), 2u);
  const auto start = Clock::now();
  auto ops = std::make_shared<FakeStreamOps>();
  ASSERT_TRUE(attachFakeProxy(comms[0], ops).isOk());
  FakeStream stream;
  std::vector<int32_t> a = proxyInputs(0, 1000, 1), b = proxyInputs(0, 1000, 2);
  // Rank 1 never joins: the first call waits in the host collective, the second behind it.
  EXPECT_TRUE(enqueueOnFake(proxyCollective(comms[0], CollKind::kAllReduce, "allreduce", a.data(),
                                            a.data(), a.size()),
                            stream)
                  .isOk());
  EXPECT_TRUE(enqueueOnFake(proxyCollective(comms[0], CollKind::kAllReduce, "allreduce", b.data(),
                                            b.data(), b.size()),
                            stream)
                  .isOk());
  EXPECT_EQ(braidCommAbort(comms[0]), braidSuccess);
  EXPECT_TRUE(stream.synchronize().isOk());  // released, not hung
  EXPECT_EQ(ops->liveAllocations(), 0);
  EXPECT_EQ(braidCommDestroy(comms[1]), braidSuccess);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), kFailsWithinSeconds);
}

}  // namespace
}  // namespace braid::testing
