// The device proxy (src/comm/device_proxy/) on a CPU fake of CUDA streams
// (tests/support/fake_stream_ops.h), over the real shm and socket transports with 2-4 ranks:
// calls return before the stream moves any data; queued collectives (in place and out of
// place, on two streams, one feeding the next, whole and cut into pipelined pieces) match a
// reference computed here; a stream
// failure or a failed host collective fails every rank — async error and next call — and
// releases every stream; destroy runs the ops still queued; abort releases the streams.
#include "comm/device_proxy/device_proxy.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "api/guard.h"
#include "comm/device_proxy/pipeline_pieces.h"
#include "comm/device_proxy/proxy_registry.h"
#include "comm/op.h"
#include "support/fake_stream_ops.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

using api::toComm;
using coll::CollKind;
using Clock = std::chrono::steady_clock;

constexpr int32_t kPoison = -7;
// Cuts the larger calls below into 1024-element pieces (the proxy pipelines them).
constexpr size_t kSmallPieces = 4096;
constexpr size_t kWholeCalls = DeviceProxy::kDefaultPieceBytes;
// A failure must reach every rank through the transport's abort, long before BRAID_TIMEOUT.
constexpr int kTimeoutSeconds = 60;
constexpr double kFailsWithinSeconds = 30;

// Element i of `rank`'s input for the op tagged `salt`: distinct per rank, index and op.
int32_t input(int rank, size_t i, int salt) {
  return static_cast<int32_t>(uint32_t(rank) * 1000003u + uint32_t(i) * 7u + uint32_t(salt));
}

// Sum over ranks, wrapping as int32 addition does.
int32_t sumOverRanks(int nranks, size_t i, int salt) {
  uint32_t sum = 0;
  for (int r = 0; r < nranks; ++r) sum += static_cast<uint32_t>(input(r, i, salt));
  return static_cast<int32_t>(sum);
}

std::vector<int32_t> inputs(int rank, size_t count, int salt) {
  std::vector<int32_t> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = input(rank, i, salt);
  return v;
}

Op collectiveOp(braidComm_t comm, CollKind kind, const char* api, const void* send, void* recv,
                size_t count) {
  Op op;
  op.kind = OpKind::kCollective;
  op.coll = kind;
  op.apiName = api;
  op.comm = comm != nullptr ? toComm(comm) : nullptr;
  op.send = send;
  op.recv = recv;
  op.count = count;
  op.type = braidInt32;
  op.op = braidSum;
  return op;
}

// What the C API does with device buffers on a communicator without a device group.
Status enqueueDevice(const Op& op, FakeStream& stream) {
  BRAID_RETURN_IF_ERROR(validate(op));
  BRAID_RETURN_IF_ERROR(op.comm->health());
  return enqueueOnProxy(op, stream.handle());
}

// Counts mismatches of got[i] against want(i), naming the first.
template <typename Want>
std::string mismatches(const std::vector<int32_t>& got, Want want) {
  size_t bad = 0;
  std::string first;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == want(i)) continue;
    if (bad++ == 0) {
      first = "element " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", want " +
              std::to_string(want(i));
    }
  }
  return bad == 0 ? "" : std::to_string(bad) + " wrong, first " + first;
}

TEST(DeviceProxyPieces, CutsOnlyLargeElementwiseCalls) {
  std::vector<int32_t> send(5000), recv(5000);
  Op op = collectiveOp(nullptr, CollKind::kAllReduce, "allreduce", send.data(), recv.data(), 5000);
  const std::vector<Op> pieces = pipelinePieces(op, 4096);  // 1024 int32 each
  ASSERT_EQ(pieces.size(), 5u);
  size_t covered = 0;
  for (const Op& piece : pieces) {
    EXPECT_EQ(piece.send, send.data() + covered);
    EXPECT_EQ(piece.recv, recv.data() + covered);
    covered += piece.count;
  }
  EXPECT_EQ(covered, 5000u);
  EXPECT_EQ(pieces.back().count, 5000u - 4 * 1024);
  // At most two pieces' worth: whole.
  EXPECT_EQ(pipelinePieces(collectiveOp(nullptr, CollKind::kAllReduce, "allreduce", send.data(),
                                        recv.data(), 2048),
                           4096)
                .size(),
            1u);
  // Not elementwise: whole, however large.
  EXPECT_EQ(pipelinePieces(collectiveOp(nullptr, CollKind::kAllGather, "allgather", send.data(),
                                        recv.data(), 5000),
                           4096)
                .size(),
            1u);
  // A buffer the rank does not use stays null (a broadcast's non-root send).
  Op broadcast =
      collectiveOp(nullptr, CollKind::kBroadcast, "broadcast", nullptr, recv.data(), 5000);
  for (const Op& piece : pipelinePieces(broadcast, 4096)) EXPECT_EQ(piece.send, nullptr);
}

class DeviceProxyData : public ::testing::TestWithParam<std::tuple<std::string, int, size_t>> {};

TEST_P(DeviceProxyData, QueuedCollectivesMatchTheReference) {
  const auto [transport, nranks, pieceBytes] = GetParam();
  spawn(
      nranks,
      [n = nranks, pieceBytes = pieceBytes](braidComm_t comm, int rank) {
        const size_t count = 4999;  // odd: chunks and rank blocks do not divide it
        const size_t block = 1531;
        auto ops = std::make_shared<FakeStreamOps>();
        ASSERT_TRUE(attachDeviceProxy(toComm(comm), ops, pieceBytes).isOk());
        FakeStream first, second;
        // The "device" buffers: only stream work touches them once the calls are queued.
        std::vector<int32_t> sumIn = inputs(rank, count, 1), sumOut(count, kPoison);
        std::vector<int32_t> inPlace = inputs(rank, count, 2);
        std::vector<int32_t> chained(count, kPoison);
        std::vector<int32_t> gatherIn = inputs(rank, block, 3), gatherOut(block * n, kPoison);
        std::vector<int32_t> gatherInPlace(block * n, kPoison);
        for (size_t i = 0; i < block; ++i) gatherInPlace[rank * block + i] = input(rank, i, 4);
        std::vector<int32_t> scatterIn = inputs(rank, block * n, 5), scatterOut(block, kPoison);
        std::vector<int32_t> scatterInPlace = inputs(rank, block * n, 8);
        const int root = 1 % n;
        std::vector<int32_t> broadcast =
            rank == root ? inputs(root, count, 6) : std::vector<int32_t>(count, kPoison);

        first.closeGate();
        second.closeGate();
        std::vector<Op> calls = {
            collectiveOp(comm, CollKind::kAllReduce, "allreduce", sumIn.data(), sumOut.data(),
                         count),
            collectiveOp(comm, CollKind::kAllReduce, "allreduce in place", inPlace.data(),
                         inPlace.data(), count),
            // Reads what the first call writes: the stream must order it after that copy back.
            collectiveOp(comm, CollKind::kAllReduce, "allreduce of a result", sumOut.data(),
                         chained.data(), count),
            collectiveOp(comm, CollKind::kAllGather, "allgather", gatherIn.data(), gatherOut.data(),
                         block),
            collectiveOp(comm, CollKind::kAllGather, "allgather in place",
                         gatherInPlace.data() + rank * block, gatherInPlace.data(), block),
            collectiveOp(comm, CollKind::kReduceScatter, "reducescatter", scatterIn.data(),
                         scatterOut.data(), block),
            // In place: the output is this rank's block of the input.
            collectiveOp(comm, CollKind::kReduceScatter, "reducescatter in place",
                         scatterInPlace.data(), scatterInPlace.data() + rank * block, block),
            collectiveOp(comm, CollKind::kBroadcast, "broadcast in place", broadcast.data(),
                         broadcast.data(), count),
        };
        calls.back().root = root;
        for (size_t c = 0; c < calls.size(); ++c) {
          FakeStream& stream = c == 3 || c == 5 ? second : first;
          Status s = enqueueDevice(calls[c], stream);
          EXPECT_TRUE(s.isOk()) << "rank " << rank << " " << calls[c].apiName << ": "
                                << s.message();
        }
        // Both streams are held: the calls returned before any data moved.
        EXPECT_EQ(sumOut[0], kPoison) << "rank " << rank;
        EXPECT_EQ(gatherOut[0], kPoison) << "rank " << rank;
        first.open();
        second.open();
        EXPECT_TRUE(first.synchronize().isOk()) << "rank " << rank;
        EXPECT_TRUE(second.synchronize().isOk()) << "rank " << rank;

        auto sum = [&](int salt) {
          return [&, salt](size_t i) { return sumOverRanks(n, i, salt); };
        };
        EXPECT_EQ(mismatches(sumOut, sum(1)), "") << "rank " << rank << " allreduce";
        EXPECT_EQ(mismatches(inPlace, sum(2)), "") << "rank " << rank << " in place";
        EXPECT_EQ(
            mismatches(chained,
                       [&](size_t i) {
                         return static_cast<int32_t>(uint32_t(n) * uint32_t(sumOverRanks(n, i, 1)));
                       }),
            "")
            << "rank " << rank << " allreduce of a result";
        EXPECT_EQ(mismatches(gatherOut, [&](size_t i) { return input(i / block, i % block, 3); }),
                  "")
            << "rank " << rank << " allgather";
        EXPECT_EQ(
            mismatches(gatherInPlace, [&](size_t i) { return input(i / block, i % block, 4); }), "")
            << "rank " << rank << " allgather in place";
        EXPECT_EQ(
            mismatches(scatterOut, [&](size_t i) { return sumOverRanks(n, rank * block + i, 5); }),
            "")
            << "rank " << rank << " reducescatter";
        const std::vector<int32_t> ownBlock(scatterInPlace.begin() + rank * block,
                                            scatterInPlace.begin() + (rank + 1) * block);
        EXPECT_EQ(
            mismatches(ownBlock, [&](size_t i) { return sumOverRanks(n, rank * block + i, 8); }),
            "")
            << "rank " << rank << " reducescatter in place";
        EXPECT_EQ(mismatches(broadcast, [&](size_t i) { return input(root, i, 6); }), "")
            << "rank " << rank << " broadcast";

        // A host call afterwards runs after the proxy's ops, on a healthy communicator.
        std::vector<int32_t> host = inputs(rank, 100, 7);
        EXPECT_EQ(braidAllReduce(host.data(), host.data(), host.size(), braidInt32, braidSum, comm,
                                 nullptr),
                  braidSuccess)
            << braidGetLastError(comm);
        EXPECT_EQ(mismatches(host, sum(7)), "") << "rank " << rank << " host allreduce";
        stopDeviceProxy(toComm(comm));
        EXPECT_EQ(ops->liveAllocations(), 0) << "rank " << rank << ": staging memory leaked";
        EXPECT_EQ(ops->liveEvents(), 0) << "rank " << rank << ": events leaked";
      },
      SpawnOptions::withTransport(transport, kTimeoutSeconds));
}

INSTANTIATE_TEST_SUITE_P(ShmAndSocket, DeviceProxyData,
                         ::testing::Combine(::testing::Values("shm", "socket"),
                                            ::testing::Values(2, 3, 4),
                                            ::testing::Values(kWholeCalls, kSmallPieces)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" +
                                  std::to_string(std::get<1>(info.param)) + "ranks_" +
                                  (std::get<2>(info.param) == kWholeCalls ? "whole" : "pieces");
                         });

TEST(DeviceProxyOrder, HostCallsWaitForTheQueuedDeviceCalls) {
  spawn(
      2,
      [](braidComm_t comm, int rank) {
        auto ops = std::make_shared<FakeStreamOps>();
        ASSERT_TRUE(attachDeviceProxy(toComm(comm), ops, kSmallPieces).isOk());
        FakeStream stream;
        const size_t count = 3000;
        std::vector<int32_t> a = inputs(rank, count, 1), b = inputs(rank, count, 2);
        std::vector<int32_t> c = inputs(rank, count, 3), h = inputs(rank, count, 4);
        std::vector<int32_t> g = inputs(rank, count, 5);
        auto device = [&](std::vector<int32_t>& v) {
          EXPECT_TRUE(enqueueDevice(collectiveOp(comm, CollKind::kAllReduce, "allreduce", v.data(),
                                                 v.data(), count),
                                    stream)
                          .isOk());
        };
        auto host = [&](std::vector<int32_t>& v) {
          return braidAllReduce(v.data(), v.data(), count, braidInt32, braidSum, comm, nullptr);
        };
        // The stream is held while the host call starts: it can only return once the gate
        // opens and the proxy has finished the device call queued before it.
        stream.closeGate();
        device(a);
        std::thread opener([&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(30));
          stream.open();
        });
        EXPECT_EQ(host(h), braidSuccess) << braidGetLastError(comm);
        EXPECT_EQ(pendingDeviceCalls(toComm(comm)), 0u) << "rank " << rank;
        opener.join();
        // In a group the host call runs at braidGroupEnd, which waits the same way.
        EXPECT_EQ(braidGroupStart(), braidSuccess);
        EXPECT_EQ(host(g), braidSuccess);
        device(b);
        EXPECT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(comm);
        EXPECT_EQ(pendingDeviceCalls(toComm(comm)), 0u) << "rank " << rank;
        device(c);
        EXPECT_EQ(braidCommFinalize(comm), braidSuccess);  // finishes the queued device call
        EXPECT_EQ(pendingDeviceCalls(toComm(comm)), 0u) << "rank " << rank;
        EXPECT_TRUE(stream.synchronize().isOk());
        int salt = 1;
        for (auto* v : {&a, &b, &c, &h, &g}) {
          EXPECT_EQ(mismatches(*v, [&](size_t i) { return sumOverRanks(2, i, salt); }), "")
              << "rank " << rank << " salt " << salt;
          ++salt;
        }
      },
      SpawnOptions::withTransport("shm", kTimeoutSeconds));
}

// Every rank: the calls end, the stream is released, the error is sticky and comes back
// from the next call. `expectStreamError`: this rank's own stream failed.
void expectFailedEverywhere(braidComm_t comm, int rank, FakeStream& stream,
                            bool expectStreamError) {
  EXPECT_EQ(stream.synchronize().isOk(), !expectStreamError) << "rank " << rank;
  // A failed stream skips its waits, so it may finish before the proxy has seen the failure;
  // the next call waits for the proxy (as below), a poll of the async error does not.
  waitForDeviceProxy(toComm(comm));
  braidResult_t async = braidSuccess;
  EXPECT_EQ(braidCommGetAsyncError(comm, &async), braidSuccess);
  EXPECT_NE(async, braidSuccess) << "rank " << rank << " has no async error";
  int32_t x = 1;
  EXPECT_NE(braidAllReduce(&x, &x, 1, braidInt32, braidSum, comm, nullptr), braidSuccess)
      << "rank " << rank << ": the next call succeeded on a failed communicator";
}

TEST(DeviceProxyFaults, AStreamFailureFailsEveryRank) {
  const auto start = Clock::now();
  spawn(
      3,
      [](braidComm_t comm, int rank) {
        const size_t count = 3000;
        auto ops = std::make_shared<FakeStreamOps>();
        // The second call's first copy to the host (the first call is 3 pieces).
        if (rank == 1) ops->failCopyToHost(4);
        ASSERT_TRUE(attachDeviceProxy(toComm(comm), ops, kSmallPieces).isOk());
        FakeStream stream;
        std::vector<std::vector<int32_t>> in, out;
        for (int c = 0; c < 4; ++c) {
          in.push_back(inputs(rank, count, c));
          out.emplace_back(count, kPoison);
        }
        for (int c = 0; c < 4; ++c) {
          Status s = enqueueDevice(collectiveOp(comm, CollKind::kAllReduce, "allreduce",
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
          EXPECT_EQ(mismatches(out[0], [](size_t i) { return sumOverRanks(3, i, 0); }), "")
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
        ASSERT_TRUE(attachDeviceProxy(toComm(comm), ops, kSmallPieces).isOk());
        FakeStream stream;
        const size_t count = 2000 + rank;
        std::vector<int32_t> a = inputs(rank, count, 1), b = inputs(rank, 2000, 2);
        EXPECT_TRUE(enqueueDevice(collectiveOp(comm, CollKind::kAllReduce, "allreduce", a.data(),
                                               a.data(), count),
                                  stream)
                        .isOk());
        (void)enqueueDevice(
            collectiveOp(comm, CollKind::kAllReduce, "allreduce", b.data(), b.data(), 2000),
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
      ASSERT_TRUE(attachDeviceProxy(toComm(comms[rank]), ops, kSmallPieces).isOk());
      FakeStream stream;
      const size_t count = 10000;
      std::vector<std::vector<int32_t>> bufs;
      for (int c = 0; c < 3; ++c) bufs.push_back(inputs(rank, count, c));
      stream.closeGate();
      for (int c = 0; c < 3; ++c) {
        EXPECT_TRUE(enqueueDevice(collectiveOp(comms[rank], CollKind::kAllReduce, "allreduce",
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
        EXPECT_EQ(mismatches(bufs[c], [c](size_t i) { return sumOverRanks(2, i, c); }), "")
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
  ASSERT_TRUE(attachDeviceProxy(toComm(comms[0]), ops, kSmallPieces).isOk());
  FakeStream stream;
  std::vector<int32_t> a = inputs(0, 1000, 1), b = inputs(0, 1000, 2);
  // Rank 1 never joins: the first call waits in the host collective, the second behind it.
  EXPECT_TRUE(enqueueDevice(collectiveOp(comms[0], CollKind::kAllReduce, "allreduce", a.data(),
                                         a.data(), a.size()),
                            stream)
                  .isOk());
  EXPECT_TRUE(enqueueDevice(collectiveOp(comms[0], CollKind::kAllReduce, "allreduce", b.data(),
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
