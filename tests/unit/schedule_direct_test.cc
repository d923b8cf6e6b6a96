// The direct (one-hop) broadcast and all-gather: when they are selected, and
// the property they exist for — no rank ever receives from a rank that has to
// receive first, so the longest chain of dependent messages is one hop.
// (Their results are checked against the reference for every rank count,
// size, chunking and buffer placement by schedule_collectives_test, which
// covers every registered algorithm.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectives/select.h"

namespace braid::coll {
namespace {

CollArgs argsOf(CollKind kind, size_t count, int nranks, int rank = 0, int root = 0) {
  CollArgs args;
  args.kind = kind;
  args.count = count;
  args.type = braidFloat32;
  args.nranks = nranks;
  args.rank = rank;
  args.root = root;
  args.chunkBytes = 64;  // several chunks per message at the sizes below
  return args;
}

// The ranks `schedule` receives from, and whether it sends anything after its
// first receive completes (a later step than a receive's, or the same step's
// actions placed after a receive: what a forwarding rank does).
struct Dependencies {
  std::vector<int> sources;
  bool forwards = false;
};

Dependencies dependenciesOf(const Schedule& schedule) {
  Dependencies d;
  for (size_t s = 0; s < schedule.steps.size(); ++s) {
    for (const Action& a : schedule.steps[s].actions) {
      if (a.kind == ActionKind::kRecv || a.kind == ActionKind::kRecvReduce) {
        d.sources.push_back(a.peer);
      }
      // A send that reads recv forwards something received (broadcast and
      // all-gather inputs live in send; in place, send is part of recv, so
      // forwarding shows as a send of a block this rank does not own).
      if (a.kind == ActionKind::kSend && a.src.buf != BufferId::kSend) d.forwards = true;
    }
  }
  return d;
}

Schedule build(const CollArgs& args, const std::string& algorithm) {
  Result<Schedule> schedule = buildSchedule(args, algorithm);
  EXPECT_TRUE(schedule.isOk()) << schedule.status().message();
  return schedule.isOk() ? std::move(*schedule) : Schedule{};
}

TEST(DirectAlgorithmsTest, BroadcastIsSelectedForSmallMessagesOnFewRanks) {
  const size_t treeLimit = (64 << 10) / 4;  // float32 elements in 64 KiB
  EXPECT_STREQ(defaultAlgorithm(argsOf(CollKind::kBroadcast, 2, 4)).name, "direct");
  EXPECT_STREQ(defaultAlgorithm(argsOf(CollKind::kBroadcast, treeLimit, 3)).name, "direct");
  EXPECT_STREQ(defaultAlgorithm(argsOf(CollKind::kBroadcast, treeLimit + 1, 4)).name, "ring");
  // Beyond four ranks the root's n-1 sends outweigh the hop saved: the binomial tree.
  EXPECT_STREQ(defaultAlgorithm(argsOf(CollKind::kBroadcast, 2, 5)).name, "binomial");
  // Two ranks: every algorithm is one hop; the ring stays.
  EXPECT_STREQ(defaultAlgorithm(argsOf(CollKind::kBroadcast, 2, 2)).name, "ring");
  // Reduce and all-reduce are unaffected.
  EXPECT_STREQ(defaultAlgorithm(argsOf(CollKind::kReduce, 2, 4)).name, "tree");
  EXPECT_STREQ(defaultAlgorithm(argsOf(CollKind::kAllReduce, 2, 4)).name, "rd");
  // All-gather keeps the ring unless forced (paired runs showed no steady gain).
  EXPECT_STREQ(defaultAlgorithm(argsOf(CollKind::kAllGather, 4, 4)).name, "ring");
}

TEST(DirectAlgorithmsTest, BroadcastRanksReceiveFromTheRootOnly) {
  for (int n : {2, 3, 4, 7}) {
    for (int root = 0; root < n; ++root) {
      for (int rank = 0; rank < n; ++rank) {
        for (bool inPlace : {false, true}) {
          CollArgs args = argsOf(CollKind::kBroadcast, 40, n, rank, root);
          args.inPlace = inPlace;
          const Schedule s = build(args, "direct");
          EXPECT_EQ(s.algorithm, "direct");
          const Dependencies d = dependenciesOf(s);
          const std::string where = "n=" + std::to_string(n) + " root=" + std::to_string(root) +
                                    " rank=" + std::to_string(rank);
          EXPECT_FALSE(d.forwards) << where;
          for (int source : d.sources) EXPECT_EQ(source, root) << where;
          // 40 floats in 64-byte chunks: 3 chunks from the root, nothing at the root.
          EXPECT_EQ(d.sources.size(), rank == root ? 0u : 3u) << where;
        }
      }
    }
  }
}

TEST(DirectAlgorithmsTest, AllGatherRanksReceiveEachBlockFromItsOwner) {
  for (int n : {2, 3, 4, 5}) {
    for (int rank = 0; rank < n; ++rank) {
      const Schedule s = build(argsOf(CollKind::kAllGather, 16, n, rank), "direct");
      std::vector<int> heard(n, 0);
      for (const Step& step : s.steps) {
        for (const Action& a : step.actions) {
          if (a.kind == ActionKind::kSend) {
            EXPECT_EQ(a.src.buf, BufferId::kSend) << "rank " << rank << " forwards";
          }
          if (a.kind != ActionKind::kRecv) continue;
          // The block a receive fills is the block of the rank it comes from.
          EXPECT_EQ(a.dst.offset / (16 * sizeof(float)), static_cast<size_t>(a.peer));
          ++heard[a.peer];
        }
      }
      for (int peer = 0; peer < n; ++peer) {
        EXPECT_EQ(heard[peer], peer == rank ? 0 : 1) << "rank " << rank << " peer " << peer;
      }
    }
  }
}

}  // namespace
}  // namespace braid::coll
