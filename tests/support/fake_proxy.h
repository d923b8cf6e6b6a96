// Set-up shared by the device-proxy tests (tests/unit/device_proxy*_test.cc): a
// communicator's device proxy attached to the CPU fake of CUDA streams
// (support/fake_stream_ops.h) with small pipeline pieces, the spawn options and test
// names of those tests, and the checks they end with.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <tuple>

#include "braid.h"
#include "core/status.h"
#include "support/fake_stream_ops.h"
#include "support/spawn.h"

namespace braid::testing {

/// The proxy's pieces in these tests: 4096 bytes (1024 int32), so that calls of a few
/// thousand elements run as several pieces and every path sees a pipeline.
constexpr size_t kFakeProxyPieceBytes = 4096;

/// BRAID_TRANSPORT=`transport`, BRAID_TIMEOUT=`timeoutSeconds` and BRAID_P2P_DISABLE=1: a
/// communicator of one host then sends device buffers to the proxy, not to cuda_p2p.
SpawnOptions fakeProxyOptions(const std::string& transport, int timeoutSeconds = 60);

/// Gives `comm` a device proxy running on `ops`, with kFakeProxyPieceBytes pieces.
Status attachFakeProxy(braidComm_t comm, std::shared_ptr<FakeStreamOps> ops);

/// Stops `comm`'s proxy, then expects `ops` to hold no staging memory and no event.
void stopAndExpectNoLeaks(braidComm_t comm, int rank, const FakeStreamOps& ops);

/// What a rank of spawnWithFakeProxies runs; `ops` is its proxy's fake.
using FakeProxyBody = std::function<void(braidComm_t comm, int rank, FakeStreamOps& ops)>;

/// Under fake device memory (support/fake_device_memory.h), runs `body` on every rank of a
/// communicator of `nranks` over `transport` (fakeProxyOptions), each rank's device proxy
/// attached to a fresh fake; then stops every proxy and expects nothing leaked.
void spawnWithFakeProxies(int nranks, const std::string& transport, const FakeProxyBody& body);

/// After device calls: a host all-reduce on `comm` (of `nranks`) runs after them, on a
/// healthy communicator, and is right.
void expectHostAllReduceWorks(braidComm_t comm, int rank, int nranks);

/// gtest's name for a (transport, rank count) parameter: "shm_3ranks".
std::string transportAndRanks(const ::testing::TestParamInfo<std::tuple<std::string, int>>& info);

}  // namespace braid::testing
