// Send/recv, groups and all-to-all-v on device buffers through the host proxy
// (src/comm/device_proxy/), driven through the C API itself: "device" buffers are host
// memory registered as device memory (tests/support/fake_device_memory.h) and streams are
// the CPU fake (tests/support/fake_stream_ops.h), over the real shm and socket transports
// with 2-4 ranks. Checked against references computed here: grouped rings in both
// directions on two streams with a collective and zero-count messages in the same group,
// a group fed by the previous group's output, single sends and receives outside a group,
// all-to-all-v with zero counts and gaps, out of place and in place; and the errors: a bad
// peer, a group mixing host and device buffers, receivers expecting other sizes than sent.
// A peer killed mid-call: device_proxy_kill_test.cc.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "support/alltoallv_layout.h"
#include "support/fake_device_memory.h"
#include "support/fake_proxy.h"
#include "support/fake_stream_ops.h"
#include "support/proxy_calls.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

void fill(FakeDeviceBuffer& buffer, int rank, int salt) {
  for (size_t i = 0; i < buffer.size(); ++i) buffer.data()[i] = proxyInput(rank, i, salt);
}

class DeviceProxyP2p : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(DeviceProxyP2p, GroupedRingsAndSingleCallsMatchTheReference) {
  const auto [transport, nranks] = GetParam();
  spawnWithFakeProxies(nranks, transport, [n = nranks](braidComm_t comm, int rank, FakeStreamOps&) {
    const int right = (rank + 1) % n, left = (rank + n - 1) % n;
    const size_t count = 3001;  // three pipeline pieces' worth, and odd
    FakeStream first, second;
    FakeDeviceBuffer toRight(count), toLeft(count), sumIn(count), single(count);
    FakeDeviceBuffer fromLeft(count, kProxyPoison), fromRight(count, kProxyPoison);
    FakeDeviceBuffer sumOut(count, kProxyPoison), relayed(count, kProxyPoison);
    FakeDeviceBuffer emptyOut(0), emptyIn(0);
    fill(toRight, rank, 1);
    fill(toLeft, rank, 2);
    fill(sumIn, rank, 3);
    fill(single, rank, 4);
    first.closeGate();
    second.closeGate();
    int device = -2;
    EXPECT_EQ(braidCommCuDevice(comm, &device), braidSuccess);
    EXPECT_EQ(device, -1) << "a communicator with no device-buffer call yet has no device";
    void* sa = first.handle();
    void* sb = second.handle();
    // One group, two streams: both ring directions, a collective, zero-count messages.
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    EXPECT_EQ(braidSend(toRight.data(), count, braidInt32, right, comm, sa), braidSuccess);
    EXPECT_EQ(braidRecv(fromLeft.data(), count, braidInt32, left, comm, sa), braidSuccess);
    EXPECT_EQ(braidSend(toLeft.data(), count, braidInt32, left, comm, sb), braidSuccess);
    EXPECT_EQ(braidRecv(fromRight.data(), count, braidInt32, right, comm, sb), braidSuccess);
    EXPECT_EQ(braidAllReduce(sumIn.data(), sumOut.data(), count, braidInt32, braidSum, comm, sa),
              braidSuccess);
    EXPECT_EQ(braidSend(emptyOut.data(), 0, braidInt32, right, comm, sb), braidSuccess);
    EXPECT_EQ(braidRecv(emptyIn.data(), 0, braidInt32, left, comm, sb), braidSuccess);
    EXPECT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(comm);
    EXPECT_EQ(braidCommCuDevice(comm, &device), braidSuccess);
    EXPECT_EQ(device, 0) << "the fake's device buffers are on device 0";
    // A second group sends on what the first received: stream order must hold it back.
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    EXPECT_EQ(braidSend(fromLeft.data(), count, braidInt32, right, comm, sa), braidSuccess);
    EXPECT_EQ(braidRecv(relayed.data(), count, braidInt32, left, comm, sa), braidSuccess);
    EXPECT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(comm);
    // Outside a group: rank 0's single send meets rank 1's single receive.
    FakeDeviceBuffer singleIn(count, kProxyPoison);
    if (rank == 0) {
      EXPECT_EQ(braidSend(single.data(), count, braidInt32, 1, comm, sb), braidSuccess);
    } else if (rank == 1) {
      EXPECT_EQ(braidRecv(singleIn.data(), count, braidInt32, 0, comm, sb), braidSuccess);
    }
    // The streams are held: every call returned before any data moved.
    EXPECT_EQ(fromLeft.data()[0], kProxyPoison) << "rank " << rank;
    EXPECT_EQ(relayed.data()[0], kProxyPoison) << "rank " << rank;
    first.open();
    second.open();
    EXPECT_TRUE(first.synchronize().isOk()) << "rank " << rank;
    EXPECT_TRUE(second.synchronize().isOk()) << "rank " << rank;

    const int leftOfLeft = (rank + n - 2) % n;
    EXPECT_EQ(proxyMismatches(fromLeft.values(), [&](size_t i) { return proxyInput(left, i, 1); }),
              "")
        << "rank " << rank << " from the left";
    EXPECT_EQ(
        proxyMismatches(fromRight.values(), [&](size_t i) { return proxyInput(right, i, 2); }), "")
        << "rank " << rank << " from the right";
    EXPECT_EQ(proxyMismatches(sumOut.values(), [&](size_t i) { return proxySum(n, i, 3); }), "")
        << "rank " << rank << " allreduce in the group";
    EXPECT_EQ(
        proxyMismatches(relayed.values(), [&](size_t i) { return proxyInput(leftOfLeft, i, 1); }),
        "")
        << "rank " << rank << " relayed";
    if (rank == 1) {
      EXPECT_EQ(proxyMismatches(singleIn.values(), [&](size_t i) { return proxyInput(0, i, 4); }),
                "")
          << "rank 1 single receive";
    }
    expectHostAllReduceWorks(comm, rank, n);
  });
}

using Layout = AllToAllvLayout;  // support/alltoallv_layout.h

Layout layoutOf(int self, int n, bool sending, bool symmetric) {
  return allToAllvLayout(self, n, sending, symmetric);
}

// What `from` puts in its send block for `to`, element k.
int32_t alltoallvValue(int from, int to, size_t k, int salt) {
  return proxyInput(from, size_t(to) * 100000 + k, salt);
}

// "" when `got` holds every block received by `self` and poison in every gap.
std::string alltoallvMismatch(const std::vector<int32_t>& got, const Layout& recv, int self,
                              int salt) {
  std::vector<int32_t> want(recv.total, kProxyPoison);
  for (size_t from = 0; from < recv.counts.size(); ++from) {
    for (size_t k = 0; k < recv.counts[from]; ++k) {
      want[recv.displs[from] + k] = alltoallvValue(int(from), self, k, salt);
    }
  }
  return proxyMismatches(got, [&](size_t i) { return want[i]; });
}

TEST_P(DeviceProxyP2p, AllToAllvMatchesTheReference) {
  const auto [transport, nranks] = GetParam();
  spawnWithFakeProxies(nranks, transport, [n = nranks](braidComm_t comm, int rank, FakeStreamOps&) {
    FakeStream stream;
    const Layout send = layoutOf(rank, n, true, false), recv = layoutOf(rank, n, false, false);
    FakeDeviceBuffer in(send.total, kProxyPoison), out(recv.total, kProxyPoison);
    for (int to = 0; to < n; ++to) {
      for (size_t k = 0; k < send.counts[to]; ++k) {
        in.data()[send.displs[to] + k] = alltoallvValue(rank, to, k, 1);
      }
    }
    // In place: one buffer, blocks both sent and overwritten.
    const Layout both = layoutOf(rank, n, true, true);
    FakeDeviceBuffer inPlace(both.total, kProxyPoison);
    for (int to = 0; to < n; ++to) {
      for (size_t k = 0; k < both.counts[to]; ++k) {
        inPlace.data()[both.displs[to] + k] = alltoallvValue(rank, to, k, 2);
      }
    }
    stream.closeGate();
    EXPECT_EQ(
        braidAllToAllv(in.data(), send.counts.data(), send.displs.data(), out.data(),
                       recv.counts.data(), recv.displs.data(), braidInt32, comm, stream.handle()),
        braidSuccess)
        << braidGetLastError(comm);
    EXPECT_EQ(
        braidAllToAllv(inPlace.data(), both.counts.data(), both.displs.data(), inPlace.data(),
                       both.counts.data(), both.displs.data(), braidInt32, comm, stream.handle()),
        braidSuccess)
        << braidGetLastError(comm);
    stream.open();
    EXPECT_TRUE(stream.synchronize().isOk()) << "rank " << rank;
    EXPECT_EQ(alltoallvMismatch(out.values(), recv, rank, 1), "")
        << "rank " << rank << " out of place";
    EXPECT_EQ(alltoallvMismatch(inPlace.values(), both, rank, 2), "")
        << "rank " << rank << " in place";
  });
}

INSTANTIATE_TEST_SUITE_P(ShmAndSocket, DeviceProxyP2p,
                         ::testing::Combine(::testing::Values("shm", "socket"),
                                            ::testing::Values(2, 3, 4)),
                         transportAndRanks);

TEST(DeviceProxyP2pErrors, BadCallsAreRefusedAndLeaveTheCommunicatorUsable) {
  spawnWithFakeProxies(2, "shm", [](braidComm_t comm, int rank, FakeStreamOps&) {
    FakeStream stream;
    FakeDeviceBuffer device(64, 1);
    std::vector<int32_t> host(64, 1);
    EXPECT_EQ(braidSend(device.data(), 64, braidInt32, 2, comm, stream.handle()),
              braidInvalidArgument);
    EXPECT_NE(std::string(braidGetLastError(comm)).find("peer"), std::string::npos)
        << braidGetLastError(comm);
    // Host and device buffers in one group on one communicator: refused on every rank.
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    EXPECT_EQ(braidSend(device.data(), 64, braidInt32, 1 - rank, comm, stream.handle()),
              braidSuccess);
    EXPECT_EQ(braidRecv(host.data(), 64, braidInt32, 1 - rank, comm, nullptr), braidSuccess);
    EXPECT_EQ(braidGroupEnd(), braidInvalidUsage);
    EXPECT_NE(std::string(braidGetLastError(nullptr)).find("host buffers"), std::string::npos)
        << braidGetLastError(nullptr);
    // Still usable: a device exchange works afterwards.
    FakeDeviceBuffer got(64, kProxyPoison);
    fill(device, rank, 5);
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    EXPECT_EQ(braidSend(device.data(), 64, braidInt32, 1 - rank, comm, stream.handle()),
              braidSuccess);
    EXPECT_EQ(braidRecv(got.data(), 64, braidInt32, 1 - rank, comm, stream.handle()), braidSuccess);
    EXPECT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(comm);
    EXPECT_TRUE(stream.synchronize().isOk());
    EXPECT_EQ(proxyMismatches(got.values(), [&](size_t i) { return proxyInput(1 - rank, i, 5); }),
              "")
        << "rank " << rank;
  });
}

// The memory kind is decided once per call: one driver query per distinct buffer (none for a
// null one), however many steps the call takes (argument checks, the device route, the proxy,
// binding the communicator's device on its first call). A call mixing a device and a host
// buffer is refused after the same single look.
TEST(DeviceProxyMemoryKind, EachBufferIsAskedOncePerCall) {
  spawnWithFakeProxies(2, "shm", [](braidComm_t comm, int rank, FakeStreamOps&) {
    FakeStream stream;
    FakeDeviceBuffer in(300, rank + 1), out(300, kProxyPoison), peer(300, kProxyPoison);
    std::vector<int32_t> host(300, 1);
    auto queries = [base = fakeDeviceQueriesOnThisThread()]() mutable {
      const size_t now = fakeDeviceQueriesOnThisThread();
      const size_t made = now - base;
      base = now;
      return made;
    };
    // The communicator's first device call (it binds the device too).
    EXPECT_EQ(
        braidAllReduce(in.data(), out.data(), 300, braidInt32, braidSum, comm, stream.handle()),
        braidSuccess)
        << braidGetLastError(comm);
    EXPECT_EQ(queries(), 2u) << "out of place, first call";
    EXPECT_EQ(
        braidAllReduce(out.data(), out.data(), 300, braidInt32, braidSum, comm, stream.handle()),
        braidSuccess);
    EXPECT_EQ(queries(), 1u) << "in place";
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    EXPECT_EQ(braidSend(in.data(), 300, braidInt32, 1 - rank, comm, stream.handle()), braidSuccess);
    EXPECT_EQ(braidRecv(peer.data(), 300, braidInt32, 1 - rank, comm, stream.handle()),
              braidSuccess);
    EXPECT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(comm);
    EXPECT_EQ(queries(), 2u) << "a send and a receive, one buffer each";
    EXPECT_EQ(
        braidAllReduce(in.data(), host.data(), 300, braidInt32, braidSum, comm, stream.handle()),
        braidInvalidUsage);
    EXPECT_NE(std::string(braidGetLastError(comm)).find("one buffer is CUDA device memory"),
              std::string::npos)
        << braidGetLastError(comm);
    EXPECT_EQ(queries(), 2u) << "a refused mixed call";
    EXPECT_TRUE(stream.synchronize().isOk());
    // Every rank: (1 + 2) * 2 after the in-place second all-reduce.
    EXPECT_EQ(proxyMismatches(out.values(), [](size_t) { return 6; }), "") << "rank " << rank;
    EXPECT_EQ(proxyMismatches(peer.values(), [&](size_t) { return 2 - rank; }), "")
        << "rank " << rank;
  });
}

// Rank 1 expects fewer elements than rank 0 sends: the receive fails, and every rank's
// streams are released with an asynchronous error, long before BRAID_TIMEOUT.
class DeviceProxyP2pMismatch : public ::testing::TestWithParam<std::string> {};

TEST_P(DeviceProxyP2pMismatch, SizesThatDoNotMatchFailEveryRank) {
  spawnWithFakeProxies(3, GetParam(), [](braidComm_t comm, int rank, FakeStreamOps&) {
    FakeStream stream;
    FakeDeviceBuffer buffer(2000, 1), after(100, 1);
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    if (rank == 0) {
      EXPECT_EQ(braidSend(buffer.data(), 2000, braidInt32, 1, comm, stream.handle()), braidSuccess);
    } else if (rank == 1) {
      EXPECT_EQ(braidRecv(buffer.data(), 500, braidInt32, 0, comm, stream.handle()), braidSuccess);
    }
    EXPECT_EQ(braidGroupEnd(), braidSuccess);
    // Queued behind the failure on every rank (rank 2 included): released, not run.
    (void)braidAllReduce(after.data(), after.data(), 100, braidInt32, braidSum, comm,
                         stream.handle());
    expectFailedEverywhere(comm, rank, stream, /*expectStreamError=*/false);
    if (rank == 1) {
      EXPECT_NE(std::string(braidGetLastError(comm)).find("rank 0"), std::string::npos)
          << "rank 1's error does not name the sender: " << braidGetLastError(comm);
    }
  });
}

INSTANTIATE_TEST_SUITE_P(ShmAndSocket, DeviceProxyP2pMismatch, ::testing::Values("shm", "socket"));

}  // namespace
}  // namespace braid::testing
