// The NCCL host API calls braid adds under its own names, each with good and bad input:
// braidCommInitRankConfig (blocking and non-blocking), braidCommInitRankScalable, init
// inside a group, braidCommRevoke, braidBcast, braidRedOpCreatePreMulSum/Destroy,
// braidMemAlloc/Free and braidCommRegister/Deregister.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "support/spawn.h"

namespace braid::testing {
namespace {

using Clock = std::chrono::steady_clock;

bool mentions(braidComm_t comm, const std::string& words) {
  return std::string(braidGetLastError(comm)).find(words) != std::string::npos;
}

// Polls braidCommGetAsyncError until it stops answering braidInProgress (bounded).
braidResult_t settle(braidComm_t comm, double seconds = 20) {
  braidResult_t state = braidInProgress;
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (state == braidInProgress && Clock::now() < deadline) {
    EXPECT_EQ(braidCommGetAsyncError(comm, &state), braidSuccess) << braidGetLastError(comm);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return state;
}

TEST(ApiConfig, BlockingConfigAndBadConfigs) {
  ScopedEnv env("BRAID_TIMEOUT", "10");
  braidUniqueId id;
  ASSERT_EQ(braidGetUniqueId(&id), braidSuccess);
  braidComm_t comms[2] = {nullptr, nullptr};
  std::thread other([&] {
    braidConfig_t config = BRAID_CONFIG_INITIALIZER;
    config.blocking = 1;
    EXPECT_EQ(braidCommInitRankConfig(&comms[1], 2, id, 1, &config), braidSuccess)
        << braidGetLastError(nullptr);
  });
  EXPECT_EQ(braidCommInitRankConfig(&comms[0], 2, id, 0, nullptr), braidSuccess)
      << braidGetLastError(nullptr);
  other.join();
  ASSERT_NE(comms[0], nullptr);
  ASSERT_NE(comms[1], nullptr);
  braidResult_t state = braidInternalError;
  EXPECT_EQ(braidCommGetAsyncError(comms[0], &state), braidSuccess);
  EXPECT_EQ(state, braidSuccess);
  for (braidComm_t comm : comms) EXPECT_EQ(braidCommDestroy(comm), braidSuccess);

  braidComm_t comm = nullptr;
  braidConfig_t junk;
  std::memset(&junk, 0, sizeof(junk));
  EXPECT_EQ(braidCommInitRankConfig(&comm, 1, id, 0, &junk), braidInvalidArgument);
  EXPECT_TRUE(mentions(nullptr, "BRAID_CONFIG_INITIALIZER")) << braidGetLastError(nullptr);
  braidConfig_t odd = BRAID_CONFIG_INITIALIZER;
  odd.blocking = 2;
  EXPECT_EQ(braidCommInitRankConfig(&comm, 1, id, 0, &odd), braidInvalidArgument);
  EXPECT_TRUE(mentions(nullptr, "blocking 2")) << braidGetLastError(nullptr);
  EXPECT_EQ(comm, nullptr);
}

// Rank 0 starts alone, non-blocking: it stays in progress (and refuses calls) until rank 1
// joins, then becomes a working communicator.
TEST(ApiConfig, NonBlockingInitIsFinishedThroughGetAsyncError) {
  ScopedEnv env("BRAID_TIMEOUT", "20");
  braidUniqueId id;
  ASSERT_EQ(braidGetUniqueId(&id), braidSuccess);
  braidConfig_t config = BRAID_CONFIG_INITIALIZER;
  config.blocking = 0;
  braidComm_t first = nullptr;
  EXPECT_EQ(braidCommInitRankConfig(&first, 2, id, 0, &config), braidInProgress);
  ASSERT_NE(first, nullptr);
  braidResult_t state = braidSuccess;
  EXPECT_EQ(braidCommGetAsyncError(first, &state), braidSuccess);
  EXPECT_EQ(state, braidInProgress);
  int32_t value = 1, sum = 0;
  EXPECT_EQ(braidAllReduce(&value, &sum, 1, braidInt32, braidSum, first, nullptr),
            braidInvalidUsage);
  EXPECT_TRUE(mentions(first, "still initializing")) << braidGetLastError(first);
  int count = 0;
  EXPECT_EQ(braidCommCount(first, &count), braidInvalidUsage);

  braidComm_t second = nullptr;
  std::thread joiner([&] {
    EXPECT_EQ(braidCommInitRank(&second, 2, id, 1), braidSuccess) << braidGetLastError(nullptr);
  });
  EXPECT_EQ(settle(first), braidSuccess);
  joiner.join();
  EXPECT_EQ(braidCommCount(first, &count), braidSuccess);
  EXPECT_EQ(count, 2);
  std::thread peer([&] {
    int32_t v = 2, s = 0;
    EXPECT_EQ(braidAllReduce(&v, &s, 1, braidInt32, braidSum, second, nullptr), braidSuccess);
    EXPECT_EQ(s, 3);
  });
  EXPECT_EQ(braidAllReduce(&value, &sum, 1, braidInt32, braidSum, first, nullptr), braidSuccess)
      << braidGetLastError(first);
  peer.join();
  EXPECT_EQ(sum, 3);
  EXPECT_EQ(braidCommDestroy(first), braidSuccess);
  EXPECT_EQ(braidCommDestroy(second), braidSuccess);
}

// A non-blocking init whose peer never comes reports the failure through GetAsyncError.
TEST(ApiConfig, NonBlockingInitFailureIsReported) {
  ScopedEnv env("BRAID_TIMEOUT", "1");
  braidUniqueId id;
  ASSERT_EQ(braidGetUniqueId(&id), braidSuccess);
  braidConfig_t config = BRAID_CONFIG_INITIALIZER;
  config.blocking = 0;
  braidComm_t lonely = nullptr;
  EXPECT_EQ(braidCommInitRankConfig(&lonely, 2, id, 0, &config), braidInProgress);
  const braidResult_t state = settle(lonely);
  EXPECT_NE(state, braidSuccess);
  EXPECT_NE(state, braidInProgress);
  int count = 0;
  EXPECT_EQ(braidCommCount(lonely, &count), braidInvalidUsage);
  EXPECT_TRUE(mentions(lonely, "initialization failed")) << braidGetLastError(lonely);
  EXPECT_EQ(braidCommDestroy(lonely), braidSuccess);
  EXPECT_EQ(braidCommDestroy(lonely), braidInvalidArgument);
}

// One thread creates all three ranks inside a group, then drives them in a group.
TEST(ApiConfig, InitInsideAGroupFromOneThread) {
  ScopedEnv env("BRAID_TIMEOUT", "20");
  braidUniqueId id;
  ASSERT_EQ(braidGetUniqueId(&id), braidSuccess);
  braidComm_t comms[3] = {};
  ASSERT_EQ(braidGroupStart(), braidSuccess);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(braidCommInitRank(&comms[r], 3, id, r), braidSuccess) << braidGetLastError(nullptr);
    EXPECT_NE(comms[r], nullptr);
  }
  ASSERT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(nullptr);
  int32_t in[3] = {1, 10, 100}, out[3] = {};
  ASSERT_EQ(braidGroupStart(), braidSuccess);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(braidAllReduce(&in[r], &out[r], 1, braidInt32, braidSum, comms[r], nullptr),
              braidSuccess);
  }
  ASSERT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(nullptr);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(out[r], 111) << "rank " << r;
  for (braidComm_t comm : comms) EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
}

TEST(ApiConfig, InitRankScalable) {
  braidUniqueId ids[2];
  ASSERT_EQ(braidGetUniqueId(&ids[0]), braidSuccess);
  std::memset(&ids[1], 0x5a, sizeof(ids[1]));  // accepted and unused
  braidComm_t comm = nullptr;
  EXPECT_EQ(braidCommInitRankScalable(&comm, 1, 0, 2, ids, nullptr), braidSuccess)
      << braidGetLastError(nullptr);
  int count = 0;
  EXPECT_EQ(braidCommCount(comm, &count), braidSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
  EXPECT_EQ(braidCommInitRankScalable(&comm, 1, 0, 0, ids, nullptr), braidInvalidArgument);
  EXPECT_TRUE(mentions(nullptr, "nId 0")) << braidGetLastError(nullptr);
  EXPECT_EQ(braidCommInitRankScalable(&comm, 1, 0, 1, nullptr, nullptr), braidInvalidArgument);
}

TEST(ApiConfig, BcastIsAnInPlaceBroadcast) {
  spawn(3, [](braidComm_t comm, int rank) {
    std::vector<int64_t> buf(1001, rank);
    EXPECT_EQ(braidBcast(buf.data(), buf.size(), braidInt64, 2, comm, nullptr), braidSuccess)
        << braidGetLastError(comm);
    EXPECT_EQ(buf, std::vector<int64_t>(1001, 2)) << "rank " << rank;
    EXPECT_EQ(braidBcast(buf.data(), buf.size(), braidInt64, 3, comm, nullptr),
              braidInvalidArgument);
    EXPECT_TRUE(mentions(comm, "root 3")) << braidGetLastError(comm);
    EXPECT_EQ(braidBcast(nullptr, 4, braidInt64, 0, comm, nullptr), braidInvalidArgument);
  });
}

uint16_t toHalf(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof(bits));
  return bits;
}

float fromHalf(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, sizeof(h));
  return static_cast<float>(h);
}

// sum_r(scalar_r * x_r) with scalar_r = r + 1 and x_r[i] = r + i, checked per type and
// collective against the same sum computed here.
TEST(ApiConfig, PreMulSumScalesEachRanksInput) {
  constexpr int kRanks = 3;
  spawn(kRanks, [](braidComm_t comm, int rank) {
    const size_t n = 257;
    // float32 all-reduce.
    float fscale = static_cast<float>(rank + 1);
    braidRedOp_t fop;
    ASSERT_EQ(
        braidRedOpCreatePreMulSum(&fop, &fscale, braidFloat32, braidScalarHostImmediate, comm),
        braidSuccess)
        << braidGetLastError(comm);
    EXPECT_GE(static_cast<int>(fop), static_cast<int>(braidNumOps));
    std::vector<float> fin(n), fout(n);
    for (size_t i = 0; i < n; ++i) fin[i] = static_cast<float>(rank + i);
    EXPECT_EQ(braidAllReduce(fin.data(), fout.data(), n, braidFloat32, fop, comm, nullptr),
              braidSuccess)
        << braidGetLastError(comm);
    for (size_t i = 0; i < n; i += 37) {
      float expect = 0;
      for (int r = 0; r < kRanks; ++r) expect += float(r + 1) * float(r + i);
      EXPECT_EQ(fout[i], expect) << "float32 [" << i << "] rank " << rank;
    }
    EXPECT_EQ(fin[1], static_cast<float>(rank + 1)) << "the input buffer was changed";
    // In place, int32 reduce-scatter.
    int32_t iscale = rank + 1;
    braidRedOp_t iop;
    ASSERT_EQ(braidRedOpCreatePreMulSum(&iop, &iscale, braidInt32, braidScalarHostImmediate, comm),
              braidSuccess);
    std::vector<int32_t> ibuf(n * kRanks);
    for (size_t i = 0; i < ibuf.size(); ++i) ibuf[i] = static_cast<int32_t>(rank + i);
    int32_t* mine = ibuf.data() + rank * n;
    EXPECT_EQ(braidReduceScatter(ibuf.data(), mine, n, braidInt32, iop, comm, nullptr),
              braidSuccess)
        << braidGetLastError(comm);
    for (size_t i = 0; i < n; i += 41) {
      int32_t expect = 0;
      for (int r = 0; r < kRanks; ++r) expect += (r + 1) * int32_t(r + rank * n + i);
      EXPECT_EQ(mine[i], expect) << "int32 [" << i << "] rank " << rank;
    }
    // fp16 reduce to root 1: scaled in fp32, rounded to fp16, summed in fp32, rounded once.
    const uint16_t hscale = toHalf(0.5f * float(rank + 1));
    braidRedOp_t hop;
    ASSERT_EQ(braidRedOpCreatePreMulSum(&hop, const_cast<uint16_t*>(&hscale), braidFloat16,
                                        braidScalarHostImmediate, comm),
              braidSuccess);
    std::vector<uint16_t> hin(n), hout(n, 0);
    for (size_t i = 0; i < n; ++i) hin[i] = toHalf(float(i % 64) + 0.25f * rank);
    EXPECT_EQ(braidReduce(hin.data(), hout.data(), n, braidFloat16, hop, 1, comm, nullptr),
              braidSuccess)
        << braidGetLastError(comm);
    if (rank == 1) {
      for (size_t i = 0; i < n; i += 29) {
        float expect = 0;
        for (int r = 0; r < kRanks; ++r) {
          expect +=
              fromHalf(toHalf(0.5f * float(r + 1) * fromHalf(toHalf(float(i % 64) + 0.25f * r))));
        }
        EXPECT_EQ(fromHalf(hout[i]), fromHalf(toHalf(expect))) << "fp16 [" << i << "]";
      }
    }
    // Bad input: another type, a device scalar, unknown and built-in operators.
    EXPECT_EQ(braidAllReduce(fin.data(), fout.data(), n, braidFloat32, iop, comm, nullptr),
              braidInvalidArgument);
    EXPECT_TRUE(mentions(comm, "was created for int32")) << braidGetLastError(comm);
    braidRedOp_t bad;
    EXPECT_EQ(braidRedOpCreatePreMulSum(&bad, &fscale, braidFloat32, braidScalarDevice, comm),
              braidInvalidUsage);
    EXPECT_EQ(
        braidRedOpCreatePreMulSum(&bad, nullptr, braidFloat32, braidScalarHostImmediate, comm),
        braidInvalidArgument);
    EXPECT_EQ(
        braidRedOpCreatePreMulSum(nullptr, &fscale, braidFloat32, braidScalarHostImmediate, comm),
        braidInvalidArgument);
    EXPECT_EQ(braidRedOpDestroy(braidSum, comm), braidInvalidArgument);
    EXPECT_TRUE(mentions(comm, "built-in")) << braidGetLastError(comm);
    for (braidRedOp_t op : {fop, iop, hop}) EXPECT_EQ(braidRedOpDestroy(op, comm), braidSuccess);
    EXPECT_EQ(braidRedOpDestroy(fop, comm), braidInvalidArgument);
    EXPECT_EQ(braidAllReduce(fin.data(), fout.data(), n, braidFloat32, fop, comm, nullptr),
              braidInvalidArgument)
        << "an operator used after braidRedOpDestroy";
  });
}

TEST(ApiConfig, MemAllocAndFree) {
  void* p = nullptr;
  ASSERT_EQ(braidMemAlloc(&p, 12345), braidSuccess) << braidGetLastError(nullptr);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u) << "not page-aligned";
  std::memset(p, 0xab, 12345);
  EXPECT_EQ(braidMemFree(p), braidSuccess);
  EXPECT_EQ(braidMemFree(nullptr), braidSuccess);
  EXPECT_EQ(braidMemAlloc(nullptr, 16), braidInvalidArgument);
  EXPECT_TRUE(mentions(nullptr, "ptr is NULL")) << braidGetLastError(nullptr);
  EXPECT_EQ(braidMemAlloc(&p, 0), braidInvalidArgument);
}

TEST(ApiConfig, RegisterAndDeregister) {
  std::vector<braidComm_t> comms = initRanks(1, SpawnOptions::withTransport("shm", 10));
  std::vector<braidComm_t> others = initRanks(1, SpawnOptions::withTransport("shm", 10));
  ASSERT_EQ(comms.size(), 1u);
  ASSERT_EQ(others.size(), 1u);
  std::vector<float> buf(64);
  void* handle = nullptr;
  ASSERT_EQ(braidCommRegister(comms[0], buf.data(), buf.size() * 4, &handle), braidSuccess);
  EXPECT_NE(handle, nullptr);
  EXPECT_EQ(braidCommDeregister(others[0], handle), braidInvalidArgument)
      << "another communicator's registration";
  EXPECT_TRUE(mentions(others[0], "not a registration")) << braidGetLastError(others[0]);
  EXPECT_EQ(braidCommDeregister(comms[0], handle), braidSuccess);
  EXPECT_EQ(braidCommDeregister(comms[0], handle), braidInvalidArgument) << "twice";
  EXPECT_EQ(braidCommRegister(comms[0], nullptr, 8, &handle), braidInvalidArgument);
  EXPECT_EQ(braidCommRegister(comms[0], buf.data(), 8, nullptr), braidInvalidArgument);
  EXPECT_EQ(braidCommDestroy(comms[0]), braidSuccess);
  EXPECT_EQ(braidCommDestroy(others[0]), braidSuccess);
}

// A revoked communicator refuses work on every rank, keeps its handle for queries and
// destroy, and rejects flags it does not know.
TEST(ApiConfig, RevokeStopsWorkOnEveryRank) {
  std::vector<braidComm_t> comms = initRanks(2, SpawnOptions::withTransport("shm", 10));
  ASSERT_EQ(comms.size(), 2u);
  EXPECT_EQ(braidCommRevoke(comms[0], 1), braidInvalidArgument);
  EXPECT_TRUE(mentions(comms[0], "revokeFlags 1")) << braidGetLastError(comms[0]);
  ASSERT_EQ(braidCommRevoke(comms[0], 0), braidSuccess) << braidGetLastError(comms[0]);
  int32_t value = 1, sum = 0;
  EXPECT_EQ(braidAllReduce(&value, &sum, 1, braidInt32, braidSum, comms[0], nullptr),
            braidInvalidUsage);
  EXPECT_TRUE(mentions(comms[0], "revoked")) << braidGetLastError(comms[0]);
  const auto start = Clock::now();
  EXPECT_NE(braidAllReduce(&value, &sum, 1, braidInt32, braidSum, comms[1], nullptr), braidSuccess)
      << "the peer of a revoked communicator still ran a collective";
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 8.0);
  int rank = -1;
  EXPECT_EQ(braidCommUserRank(comms[0], &rank), braidSuccess);
  for (braidComm_t comm : comms) EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
}

}  // namespace
}  // namespace braid::testing
