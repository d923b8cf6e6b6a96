// Split, shrink and grow inside one group, driven from one thread: the calls return at once
// and braidGroupEnd derives every communicator together (NCCL's semantics), where running
// each agreement inside its call would wait for ranks this same thread has yet to call.
// Bad input (a refused color, a parent already aborted or revoked, a rank that never calls)
// must end the group with an error in seconds, never a hang, and leave the parents usable.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "support/spawn.h"

namespace braid::testing {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bool says(const char* message, const std::string& words) {
  return std::string(message).find(words) != std::string::npos;
}

// One all-reduce per communicator in `comms` (NULL entries skipped), all from this thread in
// one group (they are ranks of one communicator). Rank r of comm i contributes 1 + key(i), so
// every member must receive the sum over its communicator's members, `expected[i]`.
void allReduceTogether(const std::vector<braidComm_t>& comms, const std::vector<int64_t>& mine,
                       const std::vector<int64_t>& expected) {
  std::vector<int64_t> out(comms.size(), -1);
  ASSERT_EQ(braidGroupStart(), braidSuccess);
  for (size_t i = 0; i < comms.size(); ++i) {
    if (comms[i] == nullptr) continue;
    EXPECT_EQ(braidAllReduce(&mine[i], &out[i], 1, braidInt64, braidSum, comms[i], nullptr),
              braidSuccess)
        << braidGetLastError(comms[i]);
  }
  ASSERT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(nullptr);
  for (size_t i = 0; i < comms.size(); ++i) {
    if (comms[i] != nullptr) {
      EXPECT_EQ(out[i], expected[i]) << "communicator " << i;
    }
  }
}

void expectRankOf(braidComm_t comm, int count, int rank) {
  int n = -1, r = -1;
  ASSERT_EQ(braidCommCount(comm, &n), braidSuccess) << braidGetLastError(comm);
  ASSERT_EQ(braidCommUserRank(comm, &r), braidSuccess) << braidGetLastError(comm);
  EXPECT_EQ(n, count);
  EXPECT_EQ(r, rank);
}

void destroyAll(const std::vector<braidComm_t>& comms) {
  for (braidComm_t c : comms) {
    if (c != nullptr) {
      EXPECT_EQ(braidCommDestroy(c), braidSuccess) << braidGetLastError(nullptr);
    }
  }
}

// Five ranks split into colors 0 = {0, 2, 4} (keyed by -rank: new order 4, 2, 0) and
// 1 = {1}; rank 3 passes BRAID_SPLIT_NOCOLOR and gets NULL. Two splits of the same parents
// in the same group, one per color layout, show that several agreements on one parent run
// side by side.
TEST(ApiGroupDerive, SplitsOfEveryRankFromOneThread) {
  ScopedEnv env("BRAID_TIMEOUT", "20");
  constexpr int kRanks = 5;
  std::vector<braidComm_t> parents = initRanks(kRanks);
  ASSERT_EQ(static_cast<int>(parents.size()), kRanks);
  std::vector<braidComm_t> byColor(kRanks, nullptr), halves(kRanks, nullptr);
  const auto start = Clock::now();
  ASSERT_EQ(braidGroupStart(), braidSuccess);
  for (int r = 0; r < kRanks; ++r) {
    const int color = r == 3 ? BRAID_SPLIT_NOCOLOR : r % 2;
    EXPECT_EQ(braidCommSplit(parents[r], color, -r, &byColor[r]), braidSuccess)
        << braidGetLastError(parents[r]);
    braidConfig_t nonBlocking = BRAID_CONFIG_INITIALIZER;
    nonBlocking.blocking = 0;  // completed at braidGroupEnd all the same
    EXPECT_EQ(braidCommSplitConfig(parents[r], r < 2 ? 0 : 1, r, &halves[r], &nonBlocking),
              braidSuccess)
        << braidGetLastError(parents[r]);
  }
  EXPECT_LT(secondsSince(start), 2) << "the splits waited inside the group";
  ASSERT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(nullptr);
  EXPECT_LT(secondsSince(start), 15);
  EXPECT_EQ(byColor[3], nullptr) << "BRAID_SPLIT_NOCOLOR yields NULL";
  expectRankOf(byColor[0], 3, 2);
  expectRankOf(byColor[2], 3, 1);
  expectRankOf(byColor[4], 3, 0);
  expectRankOf(byColor[1], 1, 0);
  for (int r = 0; r < kRanks; ++r) expectRankOf(halves[r], r < 2 ? 2 : 3, r < 2 ? r : r - 2);
  allReduceTogether(byColor, {1, 2, 3, 4, 5}, {1 + 3 + 5, 2, 9, 0, 9});
  allReduceTogether(halves, {1, 2, 3, 4, 5}, {3, 3, 12, 12, 12});
  destroyAll(byColor);
  destroyAll(halves);
  allReduceTogether(parents, {1, 1, 1, 1, 1}, {5, 5, 5, 5, 5});  // the parents go on
  destroyAll(parents);
}

// The survivors of rank 2 shrink in one group; then the survivors and a new rank grow the
// shrunk communicator back to three, again from this thread in one group.
TEST(ApiGroupDerive, ShrinkThenGrowFromOneThread) {
  ScopedEnv env("BRAID_TIMEOUT", "20");
  std::vector<braidComm_t> parents = initRanks(3);
  ASSERT_EQ(parents.size(), 3u);
  const int exclude[] = {2};
  std::vector<braidComm_t> shrunk(2, nullptr);
  ASSERT_EQ(braidGroupStart(), braidSuccess);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(braidCommShrink(parents[r], exclude, 1, &shrunk[r]), braidSuccess)
        << braidGetLastError(parents[r]);
  }
  ASSERT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(nullptr);
  for (int r = 0; r < 2; ++r) expectRankOf(shrunk[r], 2, r);
  allReduceTogether(shrunk, {10, 20}, {30, 30});

  braidUniqueId id;
  ASSERT_EQ(braidCommGetUniqueId(shrunk[0], &id), braidSuccess) << braidGetLastError(shrunk[0]);
  std::vector<braidComm_t> grown(3, nullptr);
  ASSERT_EQ(braidGroupStart(), braidSuccess);
  EXPECT_EQ(braidCommGrow(shrunk[0], 3, &id, -1, &grown[0], nullptr), braidSuccess)
      << braidGetLastError(shrunk[0]);
  EXPECT_EQ(braidCommGrow(shrunk[1], 3, nullptr, -1, &grown[1], nullptr), braidSuccess)
      << braidGetLastError(shrunk[1]);
  EXPECT_EQ(braidCommGrow(nullptr, 3, &id, 2, &grown[2], nullptr), braidSuccess)
      << braidGetLastError(nullptr);
  ASSERT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(nullptr);
  for (int r = 0; r < 3; ++r) expectRankOf(grown[r], 3, r);
  allReduceTogether(grown, {1, 2, 4}, {7, 7, 7});
  destroyAll(grown);
  destroyAll(shrunk);
  destroyAll(parents);
}

// One rank's color is refused at its call: the group fails, none of its splits runs (the
// other ranks' would wait for that rank), and braidGroupEnd says why at once. The pending
// handles answer with the group's error and are destroyed normally.
TEST(ApiGroupDerive, ARefusedColorFailsTheGroupAtOnce) {
  ScopedEnv env("BRAID_TIMEOUT", "20");
  std::vector<braidComm_t> parents = initRanks(4);
  ASSERT_EQ(parents.size(), 4u);
  std::vector<braidComm_t> subs(4, nullptr);
  const auto start = Clock::now();
  ASSERT_EQ(braidGroupStart(), braidSuccess);
  for (int r = 0; r < 4; ++r) {
    const braidResult_t result = braidCommSplit(parents[r], r == 2 ? -5 : 0, r, &subs[r]);
    EXPECT_EQ(result, r == 2 ? braidInvalidArgument : braidSuccess) << braidGetLastError(nullptr);
  }
  EXPECT_EQ(braidGroupEnd(), braidInvalidArgument);
  EXPECT_TRUE(says(braidGetLastError(nullptr), "color -5")) << braidGetLastError(nullptr);
  EXPECT_LT(secondsSince(start), 5) << "the group waited for the refused rank";
  EXPECT_EQ(subs[2], nullptr);
  for (int r : {0, 1, 3}) {
    int n = 0;
    ASSERT_NE(subs[r], nullptr);
    EXPECT_EQ(braidCommCount(subs[r], &n), braidInvalidUsage);
    EXPECT_TRUE(says(braidGetLastError(subs[r]), "not created")) << braidGetLastError(subs[r]);
  }
  destroyAll(subs);
  allReduceTogether(parents, {1, 2, 3, 4}, {10, 10, 10, 10});  // the parents go on
  destroyAll(parents);
}

// A split of a communicator already aborted (its handle is gone) or revoked is refused at
// the call and fails the group; the other ranks' splits never start.
TEST(ApiGroupDerive, ASplitOfAnAbortedOrRevokedParentFailsTheGroup) {
  ScopedEnv env("BRAID_TIMEOUT", "20");
  for (const bool abort : {true, false}) {
    SCOPED_TRACE(abort ? "aborted" : "revoked");
    std::vector<braidComm_t> parents = initRanks(3);
    ASSERT_EQ(parents.size(), 3u);
    if (abort) {
      ASSERT_EQ(braidCommAbort(parents[1]), braidSuccess);
    } else {
      ASSERT_EQ(braidCommRevoke(parents[1], 0), braidSuccess) << braidGetLastError(parents[1]);
    }
    std::vector<braidComm_t> subs(3, nullptr);
    const auto start = Clock::now();
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    for (int r = 0; r < 3; ++r) {
      const braidResult_t result = braidCommSplit(parents[r], 0, r, &subs[r]);
      if (r == 1) {
        EXPECT_NE(result, braidSuccess);
      } else {
        EXPECT_EQ(result, braidSuccess) << braidGetLastError(parents[r]);
      }
    }
    EXPECT_NE(braidGroupEnd(), braidSuccess);
    EXPECT_TRUE(says(braidGetLastError(nullptr), abort ? "not a live communicator" : "revoked"))
        << braidGetLastError(nullptr);
    EXPECT_LT(secondsSince(start), 5);
    EXPECT_EQ(subs[1], nullptr);
    destroyAll(subs);
    if (abort) parents[1] = nullptr;
    for (braidComm_t c : parents) {
      if (c != nullptr) braidCommAbort(c);
    }
  }
}

// A rank that never calls split: the others' agreement cannot complete, and ends with an
// error within BRAID_TIMEOUT (2 s here), naming the wait, instead of hanging.
TEST(ApiGroupDerive, ARankThatNeverSplitsEndsInATimeout) {
  ScopedEnv env("BRAID_TIMEOUT", "2");
  std::vector<braidComm_t> parents = initRanks(3);
  ASSERT_EQ(parents.size(), 3u);
  std::vector<braidComm_t> subs(3, nullptr);
  const auto start = Clock::now();
  ASSERT_EQ(braidGroupStart(), braidSuccess);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(braidCommSplit(parents[r], 0, r, &subs[r]), braidSuccess);
  }
  EXPECT_NE(braidGroupEnd(), braidSuccess);
  EXPECT_LT(secondsSince(start), 10) << "BRAID_TIMEOUT is 2 s";
  EXPECT_TRUE(says(braidGetLastError(nullptr), "braidGroupEnd")) << braidGetLastError(nullptr);
  destroyAll(subs);
  for (braidComm_t c : parents) braidCommAbort(c);
}

}  // namespace
}  // namespace braid::testing
