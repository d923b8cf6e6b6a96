// The tiny all-reduce: the exchange algorithm (comm/exchange_task.h), which selection picks
// for tiny all-reduces and barriers on shm, on 2, 3, 4 and 8 ranks (the most it takes).
//
// Every case first asks the selection point whether it picks the exchange, so
// a test cannot pass on the normal path by accident. Checked: every type x op
// at counts from 1 element up to the limit (and one element past it,
// which must not take the path), in place and out of place, against the
// float64 reference (tests/support/reference.h) with guard and send-buffer
// checks; bit-identical results on every rank; tiny calls interleaved with
// large collectives, grouped calls and other collectives on one communicator
// (FIFO ordering); the switches that turn the path off; BRAID_CHECK still
// catching mismatched tiny calls; barriers (which take the same exchange)
// holding every rank until all have entered. A peer that dies mid-call is covered by
// braid_mp_dead_rank's "tiny" runs (ranks must be processes to be killed).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "api/guard.h"
#include "braid.h"
#include "collectives/select.h"
#include "comm/comm.h"
#include "comm/op.h"
#include "core/config.h"
#include "core/types.h"
#include "support/collective_cases.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

constexpr size_t kTinyBytes = 4096;  // Config::tinyBytes, the default

// The largest message the path takes on `nranks`: BRAID_TINY_BYTES, but at most
// 8 KiB arriving at each rank in all (Thresholds::exchangeMaxInboundBytes).
size_t tinyLimit(int nranks) { return std::min<size_t>(kTinyBytes, 8192 / (nranks - 1)); }

Comm& commOf(braidComm_t handle) { return *api::toComm(handle); }

// Whether selection picks the exchange (the tiny path) for `o` on its communicator.
bool picksExchange(const Op& o) {
  const coll::Selection picked =
      coll::select(toCollArgs(o), coll::MemoryKind::kHost, o.comm->overrides());
  return picked.algorithm != nullptr && std::string(picked.algorithm->name) == "exchange";
}

// Whether the tiny path takes an all-reduce of `count` x `type` on `handle`.
bool takesTiny(braidComm_t handle, size_t count, braidDataType_t type, braidRedOp_t op) {
  Op o;
  o.coll = coll::CollKind::kAllReduce;
  o.apiName = "braidAllReduce";
  o.comm = &commOf(handle);
  o.count = count;
  o.type = type;
  o.op = op;
  return picksExchange(o);
}

// Whether the barrier takes the exchange on `handle`.
bool barrierTakesTiny(braidComm_t handle) {
  Op o;
  o.coll = coll::CollKind::kBarrier;
  o.apiName = "braidBarrier";
  o.comm = &commOf(handle);
  return picksExchange(o);
}

// Counts from 1 to the last that fits kTinyBytes, with the edges around
// vector widths and the limit itself.
std::vector<size_t> tinyCounts(braidDataType_t type, int nranks) {
  const size_t most = tinyLimit(nranks) / typeSize(type);
  std::vector<size_t> counts;
  for (size_t c : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{8}, size_t{9}, size_t{17},
                   size_t{33}, size_t{100}, most - 1, most}) {
    if (c <= most && (counts.empty() || c > counts.back())) counts.push_back(c);
  }
  return counts;
}

void expectCasesPass(braidComm_t comm, int rank, const std::vector<CollectiveCase>& cases,
                     uint64_t seed) {
  runCases(comm, cases, seed, [&](const CollectiveCase& c, const CaseOutcome& outcome) {
    ADD_FAILURE() << "rank " << rank << ": " << c.describe() << ": " << outcome.failure;
  });
}

class TinyAllReduceTest : public ::testing::TestWithParam<int> {};

TEST_P(TinyAllReduceTest, EveryTypeAndOpMatchesTheReference) {
  const int nranks = GetParam();
  std::vector<CollectiveCase> cases;
  for (int t = 0; t < braidNumTypes; ++t) {
    for (int o = 0; o < braidNumOps; ++o) {
      for (size_t count : tinyCounts(static_cast<braidDataType_t>(t), nranks)) {
        for (bool inPlace : {false, true}) {
          CollectiveCase c;
          c.type = static_cast<braidDataType_t>(t);
          c.op = static_cast<braidRedOp_t>(o);
          c.count = count;
          c.inPlace = inPlace;
          cases.push_back(c);
        }
      }
    }
  }
  spawn(
      nranks,
      [&](braidComm_t comm, int rank) {
        for (const CollectiveCase& c : cases) {
          if (!takesTiny(comm, c.count, c.type, c.op)) {
            ADD_FAILURE() << "rank " << rank << ": the tiny path does not take " << c.describe();
            return;
          }
        }
        // One element past the limit goes the normal way, and still agrees.
        EXPECT_TRUE(takesTiny(comm, tinyLimit(nranks), braidUint8, braidSum));
        EXPECT_FALSE(takesTiny(comm, tinyLimit(nranks) + 1, braidUint8, braidSum));
        expectCasesPass(comm, rank, cases, 1000);
      },
      SpawnOptions::withTransport("shm"));
}

// Float sums whose rounding depends on the order: every rank must still end
// with the same bits (the schedules guarantee it by reducing each element on
// one rank; the tiny path by reducing in rank order everywhere).
TEST_P(TinyAllReduceTest, EveryRankGetsTheSameBits) {
  const int nranks = GetParam();
  constexpr size_t kCount = 64;
  std::mutex mu;
  std::vector<std::vector<uint8_t>> outputs(nranks);
  spawn(
      nranks,
      [&](braidComm_t comm, int rank) {
        for (braidDataType_t type : {braidFloat16, braidBfloat16, braidFloat32, braidFloat64}) {
          for (braidRedOp_t op : {braidSum, braidAvg, braidProd}) {
            ASSERT_TRUE(takesTiny(comm, kCount, type, op));
            const size_t bytes = kCount * typeSize(type);
            // Magnitudes 1e-3 .. 1e3 mixed, so that the order of the additions shows.
            std::vector<float> values(kCount);
            for (size_t i = 0; i < kCount; ++i) {
              values[i] = static_cast<float>((i % 7 + 1) * (rank % 2 ? 1e3 : 1e-3)) *
                          (i % 3 == 0 ? -1.0f : 1.0f) / static_cast<float>(rank + 3);
            }
            std::vector<uint8_t> in(bytes), out(bytes);
            for (size_t i = 0; i < kCount; ++i) {
              if (type == braidFloat32) {
                std::memcpy(&in[i * 4], &values[i], 4);
              } else if (type == braidFloat64) {
                double d = values[i];
                std::memcpy(&in[i * 8], &d, 8);
              } else {  // the upper half of the float: a valid bf16; as fp16, some finite value
                uint32_t bits;
                std::memcpy(&bits, &values[i], 4);
                uint16_t half = static_cast<uint16_t>(bits >> 16) & 0x3bff;  // below fp16's inf
                std::memcpy(&in[i * 2], &half, 2);
              }
            }
            ASSERT_EQ(braidAllReduce(in.data(), out.data(), kCount, type, op, comm, nullptr),
                      braidSuccess)
                << braidGetLastError(comm);
            std::lock_guard<std::mutex> lock(mu);
            outputs[rank].insert(outputs[rank].end(), out.begin(), out.end());
          }
        }
      },
      SpawnOptions::withTransport("shm"));
  for (int r = 1; r < nranks; ++r) {
    EXPECT_TRUE(outputs[r] == outputs[0]) << "rank " << r << " differs from rank 0";
  }
}

// Tiny calls between large ones and other collectives: each side of every
// link must match messages in call order, whichever path sent them.
TEST_P(TinyAllReduceTest, InterleavesWithLargeAndOtherCollectives) {
  const int nranks = GetParam();
  std::vector<CollectiveCase> cases;
  auto add = [&](Collective coll, braidDataType_t type, braidRedOp_t op, size_t count,
                 bool inPlace) {
    CollectiveCase c;
    c.collective = coll;
    c.type = type;
    c.op = op;
    c.count = count;
    c.inPlace = inPlace;
    c.root = nranks - 1;
    cases.push_back(c);
  };
  constexpr size_t kLarge = 300001;  // 1.2 MB of float32: many FIFO slots, several chunks
  for (int round = 0; round < 3; ++round) {
    add(Collective::kAllReduce, braidFloat32, braidSum, 2, round % 2 == 1);
    add(Collective::kAllReduce, braidFloat32, braidSum, kLarge, round % 2 == 0);
    add(Collective::kAllReduce, braidInt8, braidMax, 5, false);
    add(Collective::kAllGather, braidInt32, braidSum, kLarge / 4, false);
    add(Collective::kAllReduce, braidFloat16, braidAvg, 1000, true);
    add(Collective::kBroadcast, braidFloat64, braidSum, kLarge / 2, false);
    add(Collective::kAllReduce, braidUint64, braidProd, 512, false);
    add(Collective::kReduceScatter, braidFloat32, braidSum, kLarge / 8, false);
    add(Collective::kSendRecvRing, braidInt32, braidSum, 7, false);
    add(Collective::kAllReduce, braidBfloat16, braidMin, 3, false);
    add(Collective::kAllToAll, braidInt32, braidSum, 9, false);
    add(Collective::kBarrier, braidInt32, braidSum, 0, false);
  }
  spawn(
      nranks,
      [&](braidComm_t comm, int rank) {
        expectCasesPass(comm, rank, cases, 2000);
        // Grouped all-reduces run on the engine, before and after direct tiny ones.
        std::vector<float> a(2, float(rank + 1)), b(3, float(rank + 1)), c(2, float(rank + 1));
        ASSERT_EQ(braidGroupStart(), braidSuccess);
        braidAllReduce(a.data(), a.data(), 2, braidFloat32, braidSum, comm, nullptr);
        braidAllReduce(b.data(), b.data(), 3, braidFloat32, braidMax, comm, nullptr);
        ASSERT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(comm);
        ASSERT_EQ(braidAllReduce(c.data(), c.data(), 2, braidFloat32, braidSum, comm, nullptr),
                  braidSuccess);
        const float sum = static_cast<float>(nranks * (nranks + 1) / 2);
        EXPECT_EQ(a[1], sum);
        EXPECT_EQ(b[2], static_cast<float>(nranks));
        EXPECT_EQ(c[0], sum);
      },
      SpawnOptions::withTransport("shm"));
}

// Half the ranks group their tiny all-reduces (the engine runs them as the
// "exchange" schedule), the others call them one by one (the direct tiny
// path): grouping is a rank's own business, so both must meet on the wire and
// agree bit for bit. Before the engine knew the exchange, the grouped ranks
// ran recursive doubling against the others' exchange and timed out.
TEST_P(TinyAllReduceTest, GroupedAndUngroupedRanksMeet) {
  const int nranks = GetParam();
  constexpr size_t kCount = 16;
  std::mutex mu;
  std::vector<std::vector<float>> sums(nranks);
  spawn(
      nranks,
      [&](braidComm_t comm, int rank) {
        ASSERT_TRUE(takesTiny(comm, kCount, braidFloat32, braidSum));
        std::vector<float> a(kCount), b(kCount), sum(kCount), max(kCount);
        for (size_t i = 0; i < kCount; ++i) {  // magnitudes apart: the order of additions shows
          a[i] = static_cast<float>((i + 1) * (rank % 2 ? 1e4 : 1e-4)) / float(rank + 3);
          b[i] = static_cast<float>(rank * 100 + i);
        }
        for (int round = 0; round < 3; ++round) {
          const bool grouped = (rank + round) % 2 == 0;
          if (grouped) {
            ASSERT_EQ(braidGroupStart(), braidSuccess);
          }
          braidResult_t r1 =
              braidAllReduce(a.data(), sum.data(), kCount, braidFloat32, braidSum, comm, nullptr);
          braidResult_t r2 =
              braidAllReduce(b.data(), max.data(), kCount, braidFloat32, braidMax, comm, nullptr);
          braidResult_t r3 = grouped ? braidGroupEnd() : braidSuccess;
          ASSERT_TRUE(r1 == braidSuccess && r2 == braidSuccess && r3 == braidSuccess)
              << "rank " << rank << (grouped ? " (grouped)" : "") << ": "
              << braidGetLastError(comm);
          for (size_t i = 0; i < kCount; ++i) {
            ASSERT_EQ(max[i], static_cast<float>((nranks - 1) * 100 + i)) << "rank " << rank;
          }
          std::lock_guard<std::mutex> lock(mu);
          sums[rank].insert(sums[rank].end(), sum.begin(), sum.end());
        }
      },
      SpawnOptions::withTransport("shm", 30));
  for (int r = 0; r < nranks; ++r) {
    ASSERT_EQ(sums[r].size(), 3 * kCount) << "rank " << r;
    EXPECT_EQ(std::memcmp(sums[r].data(), sums[0].data(), sums[0].size() * sizeof(float)), 0)
        << "rank " << r << " differs from rank 0 bitwise";
    for (size_t i = 0; i < kCount; ++i) {
      double want = 0;
      for (int k = 0; k < nranks; ++k) want += (i + 1) * (k % 2 ? 1e4 : 1e-4) / (k + 3);
      EXPECT_NEAR(sums[r][i], want, 1e-5 * want) << "rank " << r << " element " << i;
    }
  }
}

// The barrier (one round of empty messages): no rank leaves round k before
// every rank has entered it. Ranks are threads here, so a shared counter shows it.
TEST_P(TinyAllReduceTest, BarrierWaitsForEveryRank) {
  const int nranks = GetParam();
  constexpr int kRounds = 200;
  std::vector<std::atomic<int>> entered(kRounds);
  spawn(
      nranks,
      [&](braidComm_t comm, int rank) {
        ASSERT_TRUE(barrierTakesTiny(comm));
        for (int round = 0; round < kRounds; ++round) {
          entered[round].fetch_add(1);
          ASSERT_EQ(braidBarrier(comm, nullptr), braidSuccess) << braidGetLastError(comm);
          const int seen = entered[round].load();
          if (seen != nranks) {
            ADD_FAILURE() << "rank " << rank << " left barrier " << round << " when " << seen
                          << " of " << nranks << " ranks had entered it";
            return;
          }
        }
      },
      SpawnOptions::withTransport("shm"));
}

INSTANTIATE_TEST_SUITE_P(Ranks, TinyAllReduceTest, ::testing::Values(2, 3, 4, 8),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "ranks";
                         });

TEST(TinyAllReduceSwitchTest, TurnedOffByEnvironmentOrAForcedAlgorithm) {
  spawn(
      2,
      [](braidComm_t comm, int) {
        EXPECT_FALSE(takesTiny(comm, 1, braidUint8, braidSum));
        EXPECT_FALSE(barrierTakesTiny(comm));
      },
      SpawnOptions::withTransport("shm").set("BRAID_TINY_BYTES", "0"));
  spawn(
      2,
      [](braidComm_t comm, int) {
        EXPECT_TRUE(takesTiny(comm, 2, braidFloat32, braidSum));
        EXPECT_FALSE(takesTiny(comm, 16, braidFloat32, braidSum));  // 64 B > 32 B
      },
      SpawnOptions::withTransport("shm").set("BRAID_TINY_BYTES", "32"));
  // A rule for all-reduce at the size wins; sizes it does not cover stay tiny.
  spawn(
      2,
      [](braidComm_t comm, int) {
        EXPECT_FALSE(takesTiny(comm, 2, braidFloat32, braidSum));
        EXPECT_TRUE(takesTiny(comm, 64, braidFloat32, braidSum));
      },
      SpawnOptions::withTransport("shm").set("BRAID_ALGO", "allreduce:ring@0-64"));
  spawn(
      2,
      [](braidComm_t comm, int) {
        EXPECT_FALSE(takesTiny(comm, 1, braidUint8, braidSum));
        EXPECT_FALSE(barrierTakesTiny(comm));
      },
      SpawnOptions::withTransport("socket"));
  // Forced by name, the exchange runs on any transport (and answers right: the cases below).
  spawn(
      2,
      [](braidComm_t comm, int) {
        EXPECT_TRUE(takesTiny(comm, 2, braidFloat32, braidSum));
        EXPECT_FALSE(takesTiny(comm, 4096, braidFloat32, braidSum));  // past its supports()
      },
      SpawnOptions::withTransport("socket").set("BRAID_ALGO", "allreduce:exchange"));
}

// BRAID_ALGO=exchange forces the exchange where selection would not prefer it (TCP, 3
// ranks): the direct path runs it without a runner, grouped calls as a schedule, and both
// match the reference; a barrier takes it too.
TEST(TinyAllReduceSwitchTest, ForcedExchangeOverTcpMatchesTheReference) {
  std::vector<CollectiveCase> cases;
  for (braidDataType_t type : {braidFloat32, braidInt64, braidBfloat16}) {
    for (braidRedOp_t op : {braidSum, braidMax, braidAvg}) {
      for (size_t count : {size_t{1}, size_t{7}, size_t{100}}) {
        for (bool inPlace : {false, true}) {
          CollectiveCase c;
          c.type = type;
          c.op = op;
          c.count = count;
          c.inPlace = inPlace;
          cases.push_back(c);
        }
      }
    }
  }
  spawn(
      3,
      [&](braidComm_t comm, int rank) {
        for (const CollectiveCase& c : cases) {
          if (!takesTiny(comm, c.count, c.type, c.op)) {
            ADD_FAILURE() << "rank " << rank << ": the exchange is not forced for " << c.describe();
            return;
          }
        }
        EXPECT_TRUE(barrierTakesTiny(comm));
        expectCasesPass(comm, rank, cases, 2000);
        EXPECT_EQ(braidGroupStart(), braidSuccess);
        float in = static_cast<float>(rank + 1), out = 0;
        EXPECT_EQ(braidAllReduce(&in, &out, 1, braidFloat32, braidSum, comm, nullptr),
                  braidSuccess);
        EXPECT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(comm);
        EXPECT_EQ(out, 6.0f);
        EXPECT_EQ(braidBarrier(comm, nullptr), braidSuccess) << braidGetLastError(comm);
      },
      SpawnOptions::withTransport("socket").set("BRAID_ALGO",
                                                "allreduce:exchange;barrier:exchange"));
}

TEST(TinyAllReduceSwitchTest, LimitAboveTheMaximumIsRejected) {
  ScopedEnv env("BRAID_TINY_BYTES", "1M");
  Result<Config> config = Config::fromEnv();
  ASSERT_FALSE(config.isOk());
  EXPECT_EQ(config.status().code(), braidInvalidArgument);
  EXPECT_NE(config.status().message().find("BRAID_TINY_BYTES"), std::string::npos);
}

// Without BRAID_CHECK, the connectors' size check still turns mismatched
// tiny calls into an error (never garbage, never a hang).
TEST(TinyAllReduceCheckTest, MismatchedTinyCallsFailWithoutTheCheck) {
  spawn(
      2,
      [](braidComm_t comm, int rank) {
        std::vector<float> buf(4, 1.0f);
        const size_t count = rank == 0 ? 2 : 3;
        ASSERT_TRUE(takesTiny(comm, count, braidFloat32, braidSum));
        braidResult_t r =
            braidAllReduce(buf.data(), buf.data(), count, braidFloat32, braidSum, comm, nullptr);
        EXPECT_TRUE(r == braidInvalidUsage || r == braidRemoteError)
            << "rank " << rank << ": " << braidGetErrorString(r);
      },
      SpawnOptions::withTransport("shm", 30));
}

// BRAID_CHECK compares every call's arguments across ranks before any byte
// moves; tiny calls keep going through it.
TEST(TinyAllReduceCheckTest, MismatchedTinyCallsFailOnEveryRank) {
  spawn(
      2,
      [](braidComm_t comm, int rank) {
        std::vector<float> buf(4, 1.0f);
        const size_t count = rank == 0 ? 2 : 3;
        braidResult_t r =
            braidAllReduce(buf.data(), buf.data(), count, braidFloat32, braidSum, comm, nullptr);
        EXPECT_TRUE(r == braidInvalidUsage || r == braidRemoteError)
            << "rank " << rank << ": " << braidGetErrorString(r);
      },
      SpawnOptions::withTransport("shm", 30).set("BRAID_CHECK", "1"));
}

}  // namespace
}  // namespace braid::testing
