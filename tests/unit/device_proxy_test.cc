// The device proxy (src/comm/device_proxy/) on a CPU fake of CUDA streams
// (tests/support/fake_stream_ops.h), over the real shm and socket transports with 2-4 ranks:
// calls return before the stream moves any data; queued collectives (in place and out of
// place, on two streams, one feeding the next, whole and cut into pipelined pieces) match a
// reference computed here; host calls, groups and finalize wait for queued device calls.
// Failures and lifetime: device_proxy_faults_test.cc.
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
#include "comm/device_proxy/proxy_hooks.h"
#include "support/fake_proxy.h"
#include "support/fake_stream_ops.h"
#include "support/proxy_calls.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

using api::toComm;
using coll::CollKind;

// kFakeProxyPieceBytes cuts the larger calls below into 1024-element pieces (the proxy
// pipelines them); kWholeCalls leaves them whole.
constexpr size_t kSmallPieces = kFakeProxyPieceBytes;
constexpr size_t kWholeCalls = DeviceProxy::kDefaultPieceBytes;
constexpr int kTimeoutSeconds = 60;

TEST(DeviceProxyPieces, CutsOnlyLargeElementwiseCalls) {
  std::vector<int32_t> send(5000), recv(5000);
  Op op =
      proxyCollective(nullptr, CollKind::kAllReduce, "allreduce", send.data(), recv.data(), 5000);
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
  EXPECT_EQ(pipelinePieces(proxyCollective(nullptr, CollKind::kAllReduce, "allreduce", send.data(),
                                           recv.data(), 2048),
                           4096)
                .size(),
            1u);
  // Not elementwise: whole, however large.
  EXPECT_EQ(pipelinePieces(proxyCollective(nullptr, CollKind::kAllGather, "allgather", send.data(),
                                           recv.data(), 5000),
                           4096)
                .size(),
            1u);
  // A buffer the rank does not use stays null (a broadcast's non-root send).
  Op broadcast =
      proxyCollective(nullptr, CollKind::kBroadcast, "broadcast", nullptr, recv.data(), 5000);
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
        std::vector<int32_t> sumIn = proxyInputs(rank, count, 1), sumOut(count, kProxyPoison);
        std::vector<int32_t> inPlace = proxyInputs(rank, count, 2);
        std::vector<int32_t> chained(count, kProxyPoison);
        std::vector<int32_t> gatherIn = proxyInputs(rank, block, 3),
                             gatherOut(block * n, kProxyPoison);
        std::vector<int32_t> gatherInPlace(block * n, kProxyPoison);
        for (size_t i = 0; i < block; ++i) gatherInPlace[rank * block + i] = proxyInput(rank, i, 4);
        std::vector<int32_t> scatterIn = proxyInputs(rank, block * n, 5),
                             scatterOut(block, kProxyPoison);
        std::vector<int32_t> scatterInPlace = proxyInputs(rank, block * n, 8);
        const int root = 1 % n;
        std::vector<int32_t> broadcast =
            rank == root ? proxyInputs(root, count, 6) : std::vector<int32_t>(count, kProxyPoison);

        first.closeGate();
        second.closeGate();
        std::vector<Op> calls = {
            proxyCollective(comm, CollKind::kAllReduce, "allreduce", sumIn.data(), sumOut.data(),
                            count),
            proxyCollective(comm, CollKind::kAllReduce, "allreduce in place", inPlace.data(),
                            inPlace.data(), count),
            // Reads what the first call writes: the stream must order it after that copy back.
            proxyCollective(comm, CollKind::kAllReduce, "allreduce of a result", sumOut.data(),
                            chained.data(), count),
            proxyCollective(comm, CollKind::kAllGather, "allgather", gatherIn.data(),
                            gatherOut.data(), block),
            proxyCollective(comm, CollKind::kAllGather, "allgather in place",
                            gatherInPlace.data() + rank * block, gatherInPlace.data(), block),
            proxyCollective(comm, CollKind::kReduceScatter, "reducescatter", scatterIn.data(),
                            scatterOut.data(), block),
            // In place: the output is this rank's block of the input.
            proxyCollective(comm, CollKind::kReduceScatter, "reducescatter in place",
                            scatterInPlace.data(), scatterInPlace.data() + rank * block, block),
            proxyCollective(comm, CollKind::kBroadcast, "broadcast in place", broadcast.data(),
                            broadcast.data(), count),
        };
        calls.back().root = root;
        for (size_t c = 0; c < calls.size(); ++c) {
          FakeStream& stream = c == 3 || c == 5 ? second : first;
          Status s = enqueueOnFake(calls[c], stream);
          EXPECT_TRUE(s.isOk()) << "rank " << rank << " " << calls[c].apiName << ": "
                                << s.message();
        }
        // Both streams are held: the calls returned before any data moved.
        EXPECT_EQ(sumOut[0], kProxyPoison) << "rank " << rank;
        EXPECT_EQ(gatherOut[0], kProxyPoison) << "rank " << rank;
        first.open();
        second.open();
        EXPECT_TRUE(first.synchronize().isOk()) << "rank " << rank;
        EXPECT_TRUE(second.synchronize().isOk()) << "rank " << rank;

        auto sum = [&](int salt) { return [&, salt](size_t i) { return proxySum(n, i, salt); }; };
        EXPECT_EQ(proxyMismatches(sumOut, sum(1)), "") << "rank " << rank << " allreduce";
        EXPECT_EQ(proxyMismatches(inPlace, sum(2)), "") << "rank " << rank << " in place";
        EXPECT_EQ(proxyMismatches(chained,
                                  [&](size_t i) {
                                    return static_cast<int32_t>(uint32_t(n) *
                                                                uint32_t(proxySum(n, i, 1)));
                                  }),
                  "")
            << "rank " << rank << " allreduce of a result";
        EXPECT_EQ(proxyMismatches(gatherOut,
                                  [&](size_t i) { return proxyInput(i / block, i % block, 3); }),
                  "")
            << "rank " << rank << " allgather";
        EXPECT_EQ(proxyMismatches(gatherInPlace,
                                  [&](size_t i) { return proxyInput(i / block, i % block, 4); }),
                  "")
            << "rank " << rank << " allgather in place";
        EXPECT_EQ(
            proxyMismatches(scatterOut, [&](size_t i) { return proxySum(n, rank * block + i, 5); }),
            "")
            << "rank " << rank << " reducescatter";
        const std::vector<int32_t> ownBlock(scatterInPlace.begin() + rank * block,
                                            scatterInPlace.begin() + (rank + 1) * block);
        EXPECT_EQ(
            proxyMismatches(ownBlock, [&](size_t i) { return proxySum(n, rank * block + i, 8); }),
            "")
            << "rank " << rank << " reducescatter in place";
        EXPECT_EQ(proxyMismatches(broadcast, [&](size_t i) { return proxyInput(root, i, 6); }), "")
            << "rank " << rank << " broadcast";

        expectHostAllReduceWorks(comm, rank, n);
        stopAndExpectNoLeaks(comm, rank, *ops);
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
        ASSERT_TRUE(attachFakeProxy(comm, ops).isOk());
        FakeStream stream;
        const size_t count = 3000;
        std::vector<int32_t> a = proxyInputs(rank, count, 1), b = proxyInputs(rank, count, 2);
        std::vector<int32_t> c = proxyInputs(rank, count, 3), h = proxyInputs(rank, count, 4);
        std::vector<int32_t> g = proxyInputs(rank, count, 5);
        auto device = [&](std::vector<int32_t>& v) {
          EXPECT_TRUE(enqueueOnFake(proxyCollective(comm, CollKind::kAllReduce, "allreduce",
                                                    v.data(), v.data(), count),
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
          EXPECT_EQ(proxyMismatches(*v, [&](size_t i) { return proxySum(2, i, salt); }), "")
              << "rank " << rank << " salt " << salt;
          ++salt;
        }
      },
      SpawnOptions::withTransport("shm", kTimeoutSeconds));
}

}  // namespace
}  // namespace braid::testing
