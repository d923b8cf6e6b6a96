// Communicator semantics through the public API: queries, split, init-all
// driven from one thread, group nesting, self send/recv, and finalize.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "support/collective_cases.h"
#include "support/reference.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

SpawnOptions shmOptions() { return SpawnOptions::withTransport("shm", /*timeoutSeconds=*/15); }

TEST(ApiComm, CountRankAndDevice) {
  for (int nranks : {1, 3}) {
    spawn(
        nranks,
        [nranks](braidComm_t comm, int rank) {
          int count = -1, userRank = -1, device = 7;
          EXPECT_EQ(braidCommCount(comm, &count), braidSuccess);
          EXPECT_EQ(braidCommUserRank(comm, &userRank), braidSuccess);
          EXPECT_EQ(braidCommCuDevice(comm, &device), braidSuccess);
          EXPECT_EQ(count, nranks);
          EXPECT_EQ(userRank, rank);
          EXPECT_EQ(device, -1) << "host-only communicator";
          braidResult_t async = braidInternalError;
          EXPECT_EQ(braidCommGetAsyncError(comm, &async), braidSuccess);
          EXPECT_EQ(async, braidSuccess) << "a fresh communicator is healthy";
        },
        shmOptions());
  }
}

// Hosts are numbered by their lowest rank: "b,b,a,c" is hosts 0, 0, 1, 2 (hostIndices'
// rule), the same on every rank. Ranks outside the communicator and a NULL out are refused.
TEST(ApiComm, RankHostFollowsTheHostLayout) {
  spawn(
      4,
      [](braidComm_t comm, int rank) {
        const int expected[4] = {0, 0, 1, 2};
        for (int r = 0; r < 4; ++r) {
          int host = -1;
          ASSERT_EQ(braidCommRankHost(comm, r, &host), braidSuccess) << braidGetLastError(comm);
          EXPECT_EQ(host, expected[r]) << "rank " << rank << " asking about rank " << r;
        }
        int host = 7;
        EXPECT_EQ(braidCommRankHost(comm, 4, &host), braidInvalidArgument);
        EXPECT_NE(std::string(braidGetLastError(comm)).find("rank 4"), std::string::npos)
            << braidGetLastError(comm);
        EXPECT_EQ(braidCommRankHost(comm, -1, &host), braidInvalidArgument);
        EXPECT_EQ(braidCommRankHost(comm, 0, nullptr), braidInvalidArgument);
        EXPECT_EQ(host, 7) << "a refused call leaves *host alone";
      },
      SpawnOptions::withTransport("socket", 15).set("BRAID_HOST_ID", "b,b,a,c"));
}

// Five ranks: rank 4 opts out; colors 0 = {0, 2} and 1 = {1, 3}, keyed by -rank
// so the new order is reversed; then collectives on both halves at once.
TEST(ApiComm, SplitByColorAndKey) {
  spawn(
      5,
      [](braidComm_t comm, int rank) {
        const int color = rank == 4 ? BRAID_SPLIT_NOCOLOR : rank % 2;
        braidComm_t sub = reinterpret_cast<braidComm_t>(0x1);
        ASSERT_EQ(braidCommSplit(comm, color, -rank, &sub), braidSuccess)
            << "rank " << rank << ": " << braidGetLastError(comm);
        if (color == BRAID_SPLIT_NOCOLOR) {
          EXPECT_EQ(sub, nullptr) << "BRAID_SPLIT_NOCOLOR must yield NULL";
          return;
        }
        ASSERT_NE(sub, nullptr);
        int count = 0, subRank = -1;
        EXPECT_EQ(braidCommCount(sub, &count), braidSuccess);
        EXPECT_EQ(braidCommUserRank(sub, &subRank), braidSuccess);
        EXPECT_EQ(count, 2);
        EXPECT_EQ(subRank, rank < 2 ? 1 : 0) << "old rank " << rank << ", key " << -rank;
        int32_t mine = rank + 1, sum = 0;
        EXPECT_EQ(braidAllReduce(&mine, &sum, 1, braidInt32, braidSum, sub, nullptr), braidSuccess)
            << braidGetLastError(sub);
        EXPECT_EQ(sum, color == 0 ? 1 + 3 : 2 + 4);
        // A few checked collectives, including rooted ones, on the sub-communicator.
        const std::vector<CollectiveCase> cases = {
            {Collective::kAllReduce, braidFloat16, braidSum, 4099},
            {Collective::kBroadcast, braidUint8, braidSum, 7, 1},
            {Collective::kReduceScatter, braidInt64, braidMax, 1000},
            {Collective::kAllGather, braidBfloat16, braidSum, 33},
        };
        runCases(sub, cases, 99 + color, [&](const CollectiveCase& c, const CaseOutcome& o) {
          ADD_FAILURE() << "rank " << rank << " on color " << color << ": " << c.describe() << ": "
                        << o.failure;
        });
        EXPECT_EQ(braidCommDestroy(sub), braidSuccess);
      },
      shmOptions());
}

TEST(ApiComm, SplitTiesKeepTheOldOrder) {
  spawn(
      4,
      [](braidComm_t comm, int rank) {
        braidComm_t sub = nullptr;
        ASSERT_EQ(braidCommSplit(comm, 0, /*key=*/0, &sub), braidSuccess)
            << braidGetLastError(comm);
        int subRank = -1;
        EXPECT_EQ(braidCommUserRank(sub, &subRank), braidSuccess);
        EXPECT_EQ(subRank, rank);
        braidCommDestroy(sub);
      },
      shmOptions());
}

TEST(ApiComm, InitAllDrivenFromOneThreadInAGroup) {
  constexpr int kRanks = 4;
  constexpr size_t kCount = 10007;
  ScopedEnv env("BRAID_TIMEOUT", "15");
  braidComm_t comms[kRanks];
  ASSERT_EQ(braidCommInitAll(comms, kRanks, nullptr), braidSuccess) << braidGetLastError(nullptr);
  InputPattern pattern(braidFloat32, braidSum, 5);
  std::vector<std::vector<float>> send(kRanks, std::vector<float>(kCount));
  std::vector<std::vector<float>> recv(kRanks, std::vector<float>(kCount));
  std::vector<std::vector<int64_t>> broadcast(kRanks, std::vector<int64_t>(3, -1));
  for (int r = 0; r < kRanks; ++r) {
    int rank = -1;
    EXPECT_EQ(braidCommUserRank(comms[r], &rank), braidSuccess);
    EXPECT_EQ(rank, r);
    pattern.fill(r, 0, kCount, send[r].data());
    if (r == 2) broadcast[r] = {11, -22, 33};
  }
  ASSERT_EQ(braidGroupStart(), braidSuccess);
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(braidAllReduce(send[r].data(), recv[r].data(), kCount, braidFloat32, braidSum,
                             comms[r], nullptr),
              braidSuccess);
    EXPECT_EQ(braidBroadcast(broadcast[r].data(), broadcast[r].data(), 3, braidInt64, 2, comms[r],
                             nullptr),
              braidSuccess);
  }
  ASSERT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(nullptr);
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(checkReduced(braidFloat32, braidSum, kRanks, recv[r].data(), kCount,
                           sourceFromPattern(pattern), 0),
              "")
        << "rank " << r;
    EXPECT_EQ(broadcast[r], (std::vector<int64_t>{11, -22, 33})) << "rank " << r;
  }
  for (braidComm_t comm : comms) EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
}

// Each rank receives from its left neighbour in an inner group and sends to its
// right one in the outer group: only the outermost braidGroupEnd may run the
// work, otherwise every rank waits for a send nobody has posted.
TEST(ApiComm, NestedGroupsRunAtTheOutermostEnd) {
  spawn(
      3,
      [](braidComm_t comm, int rank) {
        const int right = (rank + 1) % 3, left = (rank + 2) % 3;
        int64_t out = 100 + rank, in = -1;
        ASSERT_EQ(braidGroupStart(), braidSuccess);
        ASSERT_EQ(braidGroupStart(), braidSuccess);
        EXPECT_EQ(braidRecv(&in, 1, braidInt64, left, comm, nullptr), braidSuccess);
        EXPECT_EQ(braidGroupEnd(), braidSuccess);
        EXPECT_EQ(braidSend(&out, 1, braidInt64, right, comm, nullptr), braidSuccess);
        EXPECT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(comm);
        EXPECT_EQ(in, 100 + left);
      },
      shmOptions());
}

TEST(ApiComm, EmptyGroupsReturnAtOnce) {
  EXPECT_EQ(braidGroupStart(), braidSuccess);
  EXPECT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(nullptr);
  EXPECT_EQ(braidGroupStart(), braidSuccess);
  EXPECT_EQ(braidGroupStart(), braidSuccess);
  EXPECT_EQ(braidGroupEnd(), braidSuccess);
  EXPECT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(nullptr);
}

TEST(ApiComm, SeveralCollectivesInOneGroup) {
  spawn(
      3,
      [](braidComm_t comm, int rank) {
        std::vector<int32_t> a(1000, rank), b(5, 10 * rank), sumA(1000), maxB(5);
        std::vector<double> gathered(3 * 2, 0), mine = {rank + 0.5, -rank - 0.25};
        ASSERT_EQ(braidGroupStart(), braidSuccess);
        EXPECT_EQ(braidAllReduce(a.data(), sumA.data(), 1000, braidInt32, braidSum, comm, nullptr),
                  braidSuccess);
        EXPECT_EQ(braidAllReduce(b.data(), maxB.data(), 5, braidInt32, braidMax, comm, nullptr),
                  braidSuccess);
        EXPECT_EQ(braidAllGather(mine.data(), gathered.data(), 2, braidFloat64, comm, nullptr),
                  braidSuccess);
        ASSERT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(comm);
        EXPECT_EQ(sumA, std::vector<int32_t>(1000, 0 + 1 + 2));
        EXPECT_EQ(maxB, std::vector<int32_t>(5, 20));
        EXPECT_EQ(gathered, (std::vector<double>{0.5, -0.25, 1.5, -1.25, 2.5, -2.25}));
      },
      shmOptions());
}

// NCCL allows a rank to send to itself inside a group; so must braid.
TEST(ApiComm, SendToSelfInAGroup) {
  spawn(
      2,
      [](braidComm_t comm, int rank) {
        std::vector<uint16_t> out(77), in(77, 0);
        std::iota(out.begin(), out.end(), static_cast<uint16_t>(1000 * rank));
        ASSERT_EQ(braidGroupStart(), braidSuccess);
        EXPECT_EQ(braidSend(out.data(), 77, braidFloat16, rank, comm, nullptr), braidSuccess)
            << braidGetLastError(comm);
        EXPECT_EQ(braidRecv(in.data(), 77, braidFloat16, rank, comm, nullptr), braidSuccess)
            << braidGetLastError(comm);
        EXPECT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(comm);
        EXPECT_EQ(in, out);
      },
      shmOptions());
}

TEST(ApiComm, FinalizeThenDestroy) {
  std::vector<braidComm_t> comms = initRanks(2, shmOptions());
  ASSERT_EQ(comms.size(), 2u);
  for (braidComm_t comm : comms) {
    EXPECT_EQ(braidCommFinalize(comm), braidSuccess) << braidGetLastError(comm);
    EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
  }
}

}  // namespace
}  // namespace braid::testing
