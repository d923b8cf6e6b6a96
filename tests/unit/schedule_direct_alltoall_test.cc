// The direct all-to-all (collectives/algorithms/pairwise_alltoall.cc, oneStep):
//
// 1. Shape: every exchange sits in one step — each rank sends one block to, and
//    receives one block from, every other rank there — after an optional
//    staging step (in place). That one step is why it exists: no rank waits for
//    a particular peer to reach a later step.
// 2. Results: for every rank count 1..8, odd element counts, chunkings that cut
//    blocks unevenly, in and out of place, with rendezvous and buffering
//    connectors, each rank's output equals a reference built here from the
//    inputs: block j of rank r's output is block r of rank j's input.
// 3. Selection: the size and rank range where it is the automatic choice.
// (schedule_collectives_test also runs it, and its all-to-all-v form, over its grid.)
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "collectives/select.h"
#include "support/schedule_cases.h"
#include "support/schedule_simulator.h"

namespace braid::coll {
namespace {

using testing::allToAll;

// A value no other (rank, index) pair has.
int32_t inputOf(int rank, size_t index) { return static_cast<int32_t>(rank * 1000003 + index); }

TEST(DirectAllToAllTest, EveryExchangeIsInOneStep) {
  for (int n = 2; n <= 8; ++n) {
    for (bool inPlace : {false, true}) {
      for (int r = 0; r < n; ++r) {
        SCOPED_TRACE("n=" + std::to_string(n) + " rank " + std::to_string(r) +
                     (inPlace ? " in place" : " out of place"));
        const size_t count = 37, chunkBytes = 40, block = count * 4;
        Result<Schedule> s = buildSchedule(allToAll(r, n, count, chunkBytes, inPlace), "direct");
        ASSERT_TRUE(s.isOk()) << s.status().message();
        EXPECT_EQ(s->algorithm, "direct");
        // In place, step 0 only stages the input (local copies); then the exchange step.
        ASSERT_EQ(s->steps.size(), inPlace ? 2u : 1u);
        if (inPlace) {
          for (const Action& a : s->steps[0].actions) EXPECT_EQ(a.kind, ActionKind::kCopy);
        }
        std::vector<size_t> sent(n, 0), received(n, 0);
        for (const Action& a : s->steps.back().actions) {
          if (a.kind == ActionKind::kSend) sent[a.peer] += a.src.bytes;
          if (a.kind == ActionKind::kRecv) received[a.peer] += a.dst.bytes;
        }
        for (int p = 0; p < n; ++p) {
          EXPECT_EQ(sent[p], p == r ? 0 : block) << "to rank " << p;
          EXPECT_EQ(received[p], p == r ? 0 : block) << "from rank " << p;
        }
      }
    }
  }
}

void expectMatchesReference(int n, size_t count, size_t chunkBytes, bool inPlace,
                            testing::Buffering buffering) {
  SCOPED_TRACE("n=" + std::to_string(n) + " count=" + std::to_string(count) +
               " chunk=" + std::to_string(chunkBytes) + (inPlace ? " in place" : " out of place") +
               (buffering == testing::Buffering::kEager ? " eager" : " rendezvous"));
  std::vector<testing::SimRank> ranks;
  for (int r = 0; r < n; ++r) {
    ranks.push_back(testing::makeSimRank(allToAll(r, n, count, chunkBytes, inPlace)));
    for (size_t i = 0; i < n * count; ++i) {
      const int32_t v = inputOf(r, i);
      std::memcpy(ranks[r].send() + 4 * i, &v, 4);
    }
  }
  std::vector<Schedule> built;
  Status status = testing::simulateCollective(ranks, "direct", buffering, &built);
  ASSERT_TRUE(status.isOk()) << status.message();
  ASSERT_TRUE(testing::checkMatching(built).isOk());
  for (int r = 0; r < n; ++r) {
    for (int j = 0; j < n; ++j) {
      for (size_t k = 0; k < count; ++k) {
        int32_t got;
        std::memcpy(&got, ranks[r].recv() + 4 * (j * count + k), 4);
        ASSERT_EQ(got, inputOf(j, r * count + k))
            << "rank " << r << " block " << j << " elem " << k;
      }
    }
  }
}

TEST(DirectAllToAllTest, MatchesReferenceForEveryRankCount) {
  for (int n = 1; n <= 8; ++n) {
    for (size_t count : {size_t(1), size_t(13), size_t(333)}) {
      for (size_t chunkBytes : {size_t(12), size_t(1) << 20}) {
        for (bool inPlace : {false, true}) {
          expectMatchesReference(n, count, chunkBytes, inPlace, testing::Buffering::kRendezvous);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
    expectMatchesReference(n, 131, 40, false, testing::Buffering::kEager);
    expectMatchesReference(n, 131, 40, true, testing::Buffering::kEager);
    if (::testing::Test::HasFatalFailure()) return;
  }
}
// Direct on one host with 4+ ranks, at every size; pairwise otherwise and for all-to-all-v.
TEST(DirectAllToAllTest, AutomaticSelection) {
  EXPECT_STREQ(defaultAlgorithm(allToAll(0, 4, 1, 1 << 20, false)).name, "direct");
  EXPECT_STREQ(defaultAlgorithm(allToAll(0, 8, 4096, 1 << 20, true)).name, "direct");
  EXPECT_STREQ(defaultAlgorithm(allToAll(0, 4, 8 << 20, 1 << 20, false)).name, "direct");
  EXPECT_STREQ(defaultAlgorithm(allToAll(0, 3, 8 << 20, 1 << 20, false)).name, "pairwise");
  EXPECT_STREQ(defaultAlgorithm(allToAll(0, 3, 1, 1 << 20, false)).name, "pairwise");
  EXPECT_STREQ(defaultAlgorithm(allToAll(0, 2, 1, 1 << 20, false)).name, "pairwise");
  CollArgs twoHosts = allToAll(0, 4, 1, 1 << 20, false);
  twoHosts.hosts = std::make_shared<const std::vector<int>>(std::vector<int>{0, 0, 1, 1});
  EXPECT_STREQ(defaultAlgorithm(twoHosts).name, "pairwise");
  CollArgs v = allToAll(0, 4, 0, 1 << 20, false);
  v.kind = CollKind::kAllToAllv;
  v.sendCounts = v.recvCounts = {1, 1, 1, 1};
  v.sendDispls = v.recvDispls = {0, 1, 2, 3};
  EXPECT_STREQ(defaultAlgorithm(v).name, "pairwise");
}

// A call whose size picks direct runs it, with the right result (buildSchedule's "" = default).
TEST(DirectAllToAllTest, DefaultSmallCallRunsDirect) {
  std::vector<testing::SimRank> ranks;
  for (int r = 0; r < 5; ++r) ranks.push_back(testing::makeSimRank(allToAll(r, 5, 3, 64, false)));
  std::vector<Schedule> built;
  ASSERT_TRUE(
      testing::simulateCollective(ranks, "", testing::Buffering::kRendezvous, &built).isOk());
  for (const Schedule& s : built) EXPECT_EQ(s.algorithm, "direct");
}

}  // namespace
}  // namespace braid::coll
