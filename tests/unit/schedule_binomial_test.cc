// Binomial-tree broadcast ("binomial") in the schedule simulator: every rank
// count 1..17 and 32, every root, whole and chunked messages, in place and out
// of place, rendezvous and eager connectors; results are compared with the
// root's input byte for byte. Its shape is checked too: n - 1 messages per
// chunk, every non-root receives each chunk once, and a single chunk reaches
// everyone in ceil(log2 n) steps (the chain takes n - 1).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "collectives/select.h"
#include "core/types.h"
#include "support/schedule_simulator.h"

namespace braid::coll {
namespace {

using testing::SimRank;

constexpr size_t kWhole = size_t(1) << 20;  // chunk bytes that keep these counts whole

struct BcastCase {
  int nranks;
  int root;
  size_t count;
  size_t chunkBytes;
  bool inPlace;
};

std::string describe(const BcastCase& c) {
  return "n=" + std::to_string(c.nranks) + " root=" + std::to_string(c.root) +
         " count=" + std::to_string(c.count) + " chunk=" + std::to_string(c.chunkBytes) +
         (c.inPlace ? " in-place" : " out-of-place");
}

CollArgs argsFor(const BcastCase& c, int rank) {
  CollArgs args;
  args.kind = CollKind::kBroadcast;
  args.count = c.count;
  args.type = braidInt32;
  args.rank = rank;
  args.nranks = c.nranks;
  args.root = c.root;
  args.inPlace = c.inPlace;
  args.chunkBytes = c.chunkBytes;
  return args;
}

// Builds and runs the case; every rank's recv must equal the root's input.
void runCase(const BcastCase& c, testing::Buffering buffering) {
  SCOPED_TRACE(describe(c));
  std::vector<SimRank> ranks;
  for (int r = 0; r < c.nranks; ++r) ranks.push_back(testing::makeSimRank(argsFor(c, r)));
  const size_t bytes = c.count * sizeof(int32_t);
  std::vector<int32_t> input(c.count);
  for (size_t i = 0; i < c.count; ++i) input[i] = static_cast<int32_t>(i * 2654435761u + c.root);
  uint8_t* rootInput = c.inPlace ? ranks[c.root].recv() : ranks[c.root].send();
  std::memcpy(rootInput, input.data(), bytes);

  std::vector<Schedule> built;
  Status status = testing::simulateCollective(ranks, "binomial", buffering, &built);
  ASSERT_TRUE(status.isOk()) << status.message();
  ASSERT_EQ(built[0].algorithm, "binomial");
  for (int r = 0; r < c.nranks; ++r) {
    ASSERT_EQ(0, std::memcmp(ranks[r].recv(), input.data(), bytes)) << "rank " << r;
  }
}

TEST(BinomialBroadcastTest, MatchesRootInputOverGrid) {
  for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 32}) {
    for (int root : {0, n / 2, n - 1}) {
      for (size_t count : {size_t(1), size_t(37), size_t(1000)}) {
        for (size_t chunk : {kWhole, size_t(64)}) {
          for (bool inPlace : {false, true}) {
            runCase({n, root, count, chunk, inPlace}, testing::Buffering::kRendezvous);
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

TEST(BinomialBroadcastTest, EagerConnectorsGiveTheSameResult) {
  for (int n : {3, 5, 8, 11}) {
    runCase({n, 1, 500, 128, false}, testing::Buffering::kEager);
    if (HasFatalFailure()) return;
  }
}

struct Shape {
  size_t sends = 0;
  size_t recvs = 0;
  size_t steps = 0;  // the longest schedule's step count
  std::vector<size_t> recvsByRank;
};

Shape shapeOf(int n, int root, size_t count, size_t chunkBytes) {
  Shape shape;
  for (int r = 0; r < n; ++r) {
    Result<Schedule> s = buildSchedule(argsFor({n, root, count, chunkBytes, false}, r), "binomial");
    EXPECT_TRUE(s.isOk());
    if (!s.isOk()) return shape;
    size_t mine = 0;
    for (const Step& step : s->steps) {
      for (const Action& a : step.actions) {
        if (a.kind == ActionKind::kSend) ++shape.sends;
        if (a.kind == ActionKind::kRecv) ++mine;
      }
    }
    shape.recvs += mine;
    shape.recvsByRank.push_back(mine);
    shape.steps = std::max(shape.steps, s->steps.size());
  }
  return shape;
}

TEST(BinomialBroadcastTest, UsesLogarithmicHopsAndOneMessagePerRankAndChunk) {
  for (int n : {2, 3, 4, 5, 8, 9, 16, 17}) {
    int rounds = 0;
    while ((1 << rounds) < n) ++rounds;
    for (int root : {0, n - 1}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " root=" + std::to_string(root));
      Shape one = shapeOf(n, root, 16, kWhole);
      EXPECT_EQ(one.sends, size_t(n - 1));
      EXPECT_EQ(one.recvs, size_t(n - 1));
      EXPECT_EQ(one.steps, size_t(rounds));
      for (int r = 0; r < n; ++r) EXPECT_EQ(one.recvsByRank[r], r == root ? 0u : 1u) << r;

      const size_t chunks = 5;  // 40 int32 in chunks of 32 bytes
      Shape piped = shapeOf(n, root, 40, 32);
      EXPECT_EQ(piped.sends, chunks * (n - 1));
      EXPECT_EQ(piped.steps, rounds + chunks - 1);  // chunks follow one step apart
    }
  }
}

TEST(BinomialBroadcastTest, SelectedForSmallBroadcastsOnMoreThanFourRanks) {
  for (int n : {5, 8, 64}) {
    EXPECT_STREQ(defaultAlgorithm(argsFor({n, 0, 16, kWhole, false}, 0)).name, "binomial") << n;
    // Above 64 KiB the chain pipelines the chunks.
    EXPECT_STREQ(defaultAlgorithm(argsFor({n, 0, 1 << 20, kWhole, false}, 0)).name, "ring") << n;
  }
  // Up to four ranks the root sends to each rank itself (schedule_direct_test); two: the chain.
  for (int n : {3, 4}) {
    EXPECT_STREQ(defaultAlgorithm(argsFor({n, 0, 16, kWhole, false}, 0)).name, "direct") << n;
  }
  EXPECT_STREQ(defaultAlgorithm(argsFor({2, 0, 16, kWhole, false}, 0)).name, "ring");
}

}  // namespace
}  // namespace braid::coll
