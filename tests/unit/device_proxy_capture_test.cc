// CUDA graph capture through the host proxy (src/comm/device_proxy/device_proxy_capture.cc)
// on the CPU fake (tests/support/fake_stream_ops.h: a captured stream records its work and
// a FakeGraph replays it), through the C API with fake device buffers, over shm and socket.
//
// Replays: calls made before capture, a captured all-reduce (cut into pipeline pieces) and
// a captured send/recv group replay five times with new inputs written on the stream
// before each replay, and an ordinary call after each replay reads its result (stream
// order, posted mode), then a group on two streams; every answer against the reference;
// nothing runs at capture time;
// destroying the graph frees its memory. Failures: a stream that fails before handing a
// call over fails every rank and releases every stream; a replay after braidCommAbort is
// released without running; braidCommAbort does not wait for a stream the application
// holds.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "api/guard.h"
#include "comm/device_proxy/proxy_hooks.h"
#include "support/fake_device_memory.h"
#include "support/fake_proxy.h"
#include "support/fake_stream_ops.h"
#include "support/proxy_calls.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

using api::toComm;

constexpr int kReplays = 5;

// Stream work standing in for a kernel that writes new inputs before a replay.
void writeOnStream(FakeStream& stream, FakeDeviceBuffer& buffer, int rank, int salt) {
  stream.enqueue([&buffer, rank, salt] {
    for (size_t i = 0; i < buffer.size(); ++i) buffer.data()[i] = proxyInput(rank, i, salt);
    return Status::ok();
  });
}

class DeviceProxyCapture : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(DeviceProxyCapture, ReplaysMatchTheReferenceEveryTime) {
  const auto [transport, nranks] = GetParam();
  spawnWithFakeProxies(nranks, transport, [n = nranks](braidComm_t comm, int rank, FakeStreamOps&) {
    const int right = (rank + 1) % n, left = (rank + n - 1) % n;
    const size_t count = 3000;  // 3 pieces of kFakeProxyPieceBytes
    FakeStream stream;
    FakeDeviceBuffer in(count), out(count, kProxyPoison), doubled(count, kProxyPoison);
    FakeDeviceBuffer toRight(count), fromLeft(count, kProxyPoison);
    // An ordinary call before the capture (queued at call time).
    writeOnStream(stream, in, rank, 100);
    ASSERT_EQ(
        braidAllReduce(in.data(), out.data(), count, braidInt32, braidSum, comm, stream.handle()),
        braidSuccess);
    ASSERT_TRUE(stream.synchronize().isOk());
    EXPECT_EQ(proxyMismatches(out.values(), [&](size_t i) { return proxySum(n, i, 100); }), "")
        << "rank " << rank << " before the capture";

    stream.beginCapture();
    EXPECT_EQ(
        braidAllReduce(in.data(), out.data(), count, braidInt32, braidSum, comm, stream.handle()),
        braidSuccess)
        << braidGetLastError(comm);
    EXPECT_EQ(braidGroupStart(), braidSuccess);
    EXPECT_EQ(braidSend(toRight.data(), count, braidInt32, right, comm, stream.handle()),
              braidSuccess);
    EXPECT_EQ(braidRecv(fromLeft.data(), count, braidInt32, left, comm, stream.handle()),
              braidSuccess);
    EXPECT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(nullptr);
    std::unique_ptr<FakeGraph> graph = stream.endCapture();
    ASSERT_NE(graph, nullptr);
    EXPECT_EQ(pendingDeviceCalls(toComm(comm)), 0u) << "capture must not queue a call";
    EXPECT_EQ(fromLeft.data()[0], kProxyPoison) << "capture must not move data";

    for (int replay = 0; replay < kReplays; ++replay) {
      writeOnStream(stream, in, rank, replay);
      writeOnStream(stream, toRight, rank, 50 + replay);
      graph->launch();
      // Ordinary call after the replay, reading its output: handed over in stream order.
      EXPECT_EQ(braidAllReduce(out.data(), doubled.data(), count, braidInt32, braidSum, comm,
                               stream.handle()),
                braidSuccess)
          << braidGetLastError(comm);
      EXPECT_TRUE(stream.synchronize().isOk()) << "rank " << rank;
      EXPECT_EQ(proxyMismatches(out.values(), [&](size_t i) { return proxySum(n, i, replay); }), "")
          << "rank " << rank << " replay " << replay << " all-reduce";
      EXPECT_EQ(proxyMismatches(fromLeft.values(),
                                [&](size_t i) { return proxyInput(left, i, 50 + replay); }),
                "")
          << "rank " << rank << " replay " << replay << " from the left";
      EXPECT_EQ(proxyMismatches(doubled.values(),
                                [&](size_t i) {
                                  return static_cast<int32_t>(uint32_t(n) *
                                                              uint32_t(proxySum(n, i, replay)));
                                }),
                "")
          << "rank " << rank << " replay " << replay << " the call after it";
    }
    // Posted mode, a group on two streams: the hand-over waits for both parts' copies.
    FakeStream other;
    FakeDeviceBuffer sent(count), received(count, kProxyPoison);
    writeOnStream(other, sent, rank, 77);
    EXPECT_EQ(braidGroupStart(), braidSuccess);
    EXPECT_EQ(braidSend(sent.data(), count, braidInt32, right, comm, other.handle()), braidSuccess);
    EXPECT_EQ(braidRecv(received.data(), count, braidInt32, left, comm, stream.handle()),
              braidSuccess);
    EXPECT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(nullptr);
    EXPECT_TRUE(stream.synchronize().isOk());
    EXPECT_TRUE(other.synchronize().isOk());
    EXPECT_EQ(proxyMismatches(received.values(), [&](size_t i) { return proxyInput(left, i, 77); }),
              "")
        << "rank " << rank << " two-stream group after the capture";
    graph.reset();  // its items retire; the next call or the shutdown frees them
    expectHostAllReduceWorks(comm, rank, n);
  });
}

INSTANTIATE_TEST_SUITE_P(ShmAndSocket, DeviceProxyCapture,
                         ::testing::Combine(::testing::Values("shm", "socket"),
                                            ::testing::Values(2, 3)),
                         transportAndRanks);

TEST(DeviceProxyCaptureFaults, AStreamThatFailsBeforeHandingOverFailsEveryRank) {
  FakeDeviceMemoryScope fakeDevice;
  spawn(
      3,
      [](braidComm_t comm, int rank) {
        auto ops = std::make_shared<FakeStreamOps>();
        // Copy 1 is captured; copy 2 belongs to the ordinary call after the capture.
        if (rank == 1) ops->failCopyToHost(2);
        ASSERT_TRUE(attachFakeProxy(comm, ops).isOk());
        FakeStream stream;
        FakeDeviceBuffer a(100, 1), b(100, 2);
        stream.beginCapture();
        EXPECT_EQ(
            braidAllReduce(a.data(), a.data(), 100, braidInt32, braidSum, comm, stream.handle()),
            braidSuccess);
        std::unique_ptr<FakeGraph> graph = stream.endCapture();
        // Posted mode from here: rank 1's stream fails before it hands this call over.
        EXPECT_EQ(
            braidAllReduce(b.data(), b.data(), 100, braidInt32, braidSum, comm, stream.handle()),
            braidSuccess);
        expectFailedEverywhere(comm, rank, stream, /*expectStreamError=*/rank == 1);
        graph.reset();
        stopDeviceProxy(toComm(comm));
        EXPECT_EQ(ops->liveAllocations(), 0) << "rank " << rank;
      },
      fakeProxyOptions("shm"));
}

TEST(DeviceProxyCaptureFaults, AReplayAfterAbortIsReleased) {
  FakeDeviceMemoryScope fakeDevice;
  std::vector<braidComm_t> comms = initRanks(2, fakeProxyOptions("socket"));
  ASSERT_EQ(comms.size(), 2u);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      braidComm_t comm = comms[rank];
      auto ops = std::make_shared<FakeStreamOps>();
      ASSERT_TRUE(attachFakeProxy(comm, ops).isOk());
      FakeStream stream;
      FakeDeviceBuffer a(100);
      writeOnStream(stream, a, rank, 3);
      stream.beginCapture();
      EXPECT_EQ(
          braidAllReduce(a.data(), a.data(), 100, braidInt32, braidSum, comm, stream.handle()),
          braidSuccess);
      std::unique_ptr<FakeGraph> graph = stream.endCapture();
      graph->launch();
      EXPECT_TRUE(stream.synchronize().isOk());
      EXPECT_EQ(proxyMismatches(a.values(), [](size_t i) { return proxySum(2, i, 3); }), "")
          << "rank " << rank;
      EXPECT_EQ(braidCommAbort(comm), braidSuccess);
      graph->launch();                           // the proxy is gone: released, not run
      EXPECT_TRUE(stream.synchronize().isOk());  // not hung
      graph.reset();
    });
  }
  for (auto& t : ranks) t.join();
}

TEST(DeviceProxyCaptureFaults, AbortDoesNotWaitForAHeldStream) {
  FakeDeviceMemoryScope fakeDevice;
  std::vector<braidComm_t> comms = initRanks(2, fakeProxyOptions("shm"));
  ASSERT_EQ(comms.size(), 2u);
  auto ops = std::make_shared<FakeStreamOps>();
  ASSERT_TRUE(attachFakeProxy(comms[0], ops).isOk());
  FakeStream stream;
  FakeDeviceBuffer a(100, 1);
  stream.beginCapture();  // posted mode from here; the graph is never launched
  EXPECT_EQ(
      braidAllReduce(a.data(), a.data(), 100, braidInt32, braidSum, comms[0], stream.handle()),
      braidSuccess);
  std::unique_ptr<FakeGraph> graph = stream.endCapture();
  // Held by the application: the call is not handed over before the abort.
  stream.closeGate();
  EXPECT_EQ(
      braidAllReduce(a.data(), a.data(), 100, braidInt32, braidSum, comms[0], stream.handle()),
      braidSuccess);
  // The abort writes the call off (or, if the stream gets there first, fails it) and then
  // waits for the stream's copies back, which the gate releases a little later.
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stream.open();
  });
  EXPECT_EQ(braidCommAbort(comms[0]), braidSuccess);
  opener.join();
  EXPECT_TRUE(stream.synchronize().isOk());  // its wait was released
  graph.reset();
  EXPECT_EQ(braidCommDestroy(comms[1]), braidSuccess);
}

}  // namespace
}  // namespace braid::testing
