#include "support/fake_proxy.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "api/guard.h"
#include "comm/device_proxy/proxy_hooks.h"
#include "support/fake_device_memory.h"
#include "support/proxy_calls.h"

namespace braid::testing {

SpawnOptions fakeProxyOptions(const std::string& transport, int timeoutSeconds) {
  return SpawnOptions::withTransport(transport, timeoutSeconds).set("BRAID_P2P_DISABLE", "1");
}

Status attachFakeProxy(braidComm_t comm, std::shared_ptr<FakeStreamOps> ops) {
  return attachDeviceProxy(api::toComm(comm), std::move(ops), kFakeProxyPieceBytes);
}

void stopAndExpectNoLeaks(braidComm_t comm, int rank, const FakeStreamOps& ops) {
  stopDeviceProxy(api::toComm(comm));
  EXPECT_EQ(ops.liveAllocations(), 0) << "rank " << rank << ": staging memory leaked";
  EXPECT_EQ(ops.liveEvents(), 0) << "rank " << rank << ": events leaked";
}

void spawnWithFakeProxies(int nranks, const std::string& transport, const FakeProxyBody& body) {
  FakeDeviceMemoryScope fakeDevice;
  spawn(
      nranks,
      [&body](braidComm_t comm, int rank) {
        auto ops = std::make_shared<FakeStreamOps>();
        ASSERT_TRUE(attachFakeProxy(comm, ops).isOk()) << "rank " << rank;
        body(comm, rank, *ops);
        stopAndExpectNoLeaks(comm, rank, *ops);
      },
      fakeProxyOptions(transport));
}

void expectHostAllReduceWorks(braidComm_t comm, int rank, int nranks) {
  std::vector<int32_t> host = proxyInputs(rank, 100, 7);
  EXPECT_EQ(
      braidAllReduce(host.data(), host.data(), host.size(), braidInt32, braidSum, comm, nullptr),
      braidSuccess)
      << "rank " << rank << ": " << braidGetLastError(comm);
  EXPECT_EQ(proxyMismatches(host, [&](size_t i) { return proxySum(nranks, i, 7); }), "")
      << "rank " << rank << " host all-reduce after the device calls";
}

std::string transportAndRanks(const ::testing::TestParamInfo<std::tuple<std::string, int>>& info) {
  return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "ranks";
}

}  // namespace braid::testing
