// The shape of the pairwise all-to-all schedule (collectives/algorithms/pairwise_alltoall.cc),
// read from the built schedules; its results are checked against references by
// schedule_collectives_test, schedule_host_order_test and the all-to-all sweeps.
//
// 1. Out of place, the own block is copied during the first exchange, not before
//    it: chunk c of the copy waits for the c-th receive of that step, and the
//    copies cover the own block exactly once.
// 2. In place, all-to-all stages every block but its own into scratch and never
//    copies the own block (it is already in place); all-to-all-v still stages all.
// 3. Every send of pairwise and direct all-to-all(-v) is marked a block (Action::block:
//    the transport may let the peer read it in place); ring all-to-all's relayed
//    bundles and other collectives' sends are not.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectives/algorithms/patterns.h"
#include "collectives/select.h"
#include "support/schedule_cases.h"

namespace braid::coll {
namespace {

using testing::allToAll;

Schedule pairwise(const CollArgs& args) {
  Result<Schedule> s = buildSchedule(args, "pairwise");
  EXPECT_TRUE(s.isOk()) << s.status().message();
  if (!s.isOk()) return {};
  EXPECT_EQ(s->algorithm, "pairwise");
  return *s;
}

// Bytes of [offset, offset + bytes) in `buf` that copy actions of `s` write.
size_t copiedInto(const Schedule& s, BufferId buf, size_t offset, size_t bytes) {
  size_t total = 0;
  for (const Step& step : s.steps) {
    for (const Action& a : step.actions) {
      if (a.kind != ActionKind::kCopy || a.dst.buf != buf) continue;
      const size_t lo = std::max(offset, a.dst.offset);
      const size_t hi = std::min(offset + bytes, a.dst.offset + a.dst.bytes);
      total += hi > lo ? hi - lo : 0;
    }
  }
  return total;
}

TEST(PairwiseScheduleTest, OwnBlockIsCopiedDuringTheFirstExchange) {
  for (int n : {1, 2, 3, 4}) {
    for (size_t count : {size_t(1), size_t(100), size_t(1000)}) {
      for (int r = 0; r < n; ++r) {
        SCOPED_TRACE("n=" + std::to_string(n) + " rank " + std::to_string(r) +
                     " count=" + std::to_string(count));
        const size_t block = count * 4, chunkBytes = 256;
        const Schedule s = pairwise(allToAll(r, n, count, chunkBytes, false));
        ASSERT_EQ(s.steps.size(), static_cast<size_t>(std::max(n - 1, 1)));
        EXPECT_EQ(copiedInto(s, BufferId::kRecv, r * block, block), block);
        size_t copies = 0, recvsSeen = 0;
        for (size_t i = 0; i < s.steps[0].actions.size(); ++i) {
          const Action& a = s.steps[0].actions[i];
          if (a.kind == ActionKind::kRecv) {
            EXPECT_EQ(a.peer, ringPeer(r, n, -1));
            ++recvsSeen;
          }
          if (a.kind != ActionKind::kCopy) continue;
          // Copy c waits for receive c (there are as many receives as copies).
          EXPECT_EQ(a.src.buf, BufferId::kSend);
          if (n == 1) {
            EXPECT_EQ(a.after, -1);
          } else {
            ASSERT_GE(a.after, 0);
            ASSERT_LT(static_cast<size_t>(a.after), i);
            const Action& waitsFor = s.steps[0].actions[a.after];
            EXPECT_EQ(waitsFor.kind, ActionKind::kRecv);
            EXPECT_EQ(waitsFor.dst.offset - waitsFor.dst.offset % block,
                      ringPeer(r, n, -1) * block);
            EXPECT_EQ(waitsFor.dst.offset % block, a.dst.offset % block) << "not chunk " << copies;
          }
          ++copies;
        }
        EXPECT_EQ(copies, (block + chunkBytes - 1) / chunkBytes);
        if (n > 1) {
          EXPECT_EQ(recvsSeen, copies);
        }
        for (size_t step = 1; step < s.steps.size(); ++step) {
          for (const Action& a : s.steps[step].actions) EXPECT_NE(a.kind, ActionKind::kCopy);
        }
      }
    }
  }
}

TEST(PairwiseScheduleTest, InPlaceAllToAllLeavesTheOwnBlockAlone) {
  for (int n : {1, 2, 3, 4}) {
    for (int r = 0; r < n; ++r) {
      SCOPED_TRACE("n=" + std::to_string(n) + " rank " + std::to_string(r));
      const size_t count = 100, block = count * 4;
      const Schedule s = pairwise(allToAll(r, n, count, 1 << 20, true));
      // The own block: never written by a copy (nor read into scratch).
      EXPECT_EQ(copiedInto(s, BufferId::kRecv, r * block, block), 0u);
      EXPECT_EQ(copiedInto(s, BufferId::kScratch, r * block, block), 0u);
      // Every other block is staged once, before the exchanges.
      EXPECT_EQ(copiedInto(s, BufferId::kScratch, 0, n * block), (n - 1) * block);
      if (n == 1) {
        EXPECT_TRUE(s.steps.empty());
        EXPECT_EQ(s.scratchBytes, 0u);
      }
    }
  }
  // All-to-all-v in place: its send blocks may overlap, so everything is staged and
  // the own block is copied from scratch.
  CollArgs v = allToAll(0, 2, 0, 1 << 20, true);
  v.kind = CollKind::kAllToAllv;
  v.sendCounts = v.recvCounts = {3, 5};
  v.sendDispls = v.recvDispls = {0, 3};
  const Schedule s = pairwise(v);
  EXPECT_EQ(copiedInto(s, BufferId::kScratch, 0, 32), 32u);
  EXPECT_EQ(copiedInto(s, BufferId::kRecv, 0, 12), 12u);
}

// Counts the sends of `s` and those of them marked as blocks.
void countSends(const Schedule& s, size_t* sends, size_t* blocks) {
  *sends = *blocks = 0;
  for (const Step& step : s.steps) {
    for (const Action& a : step.actions) {
      if (a.kind != ActionKind::kSend) continue;
      ++*sends;
      *blocks += a.block ? 1 : 0;
    }
  }
}

TEST(PairwiseScheduleTest, AllToAllSendsAreBlocksAndOthersAreNot) {
  for (const char* algorithm : {"pairwise", "direct", "ring"}) {
    for (bool inPlace : {false, true}) {
      for (int rank = 0; rank < 3; ++rank) {
        SCOPED_TRACE(std::string(algorithm) + (inPlace ? " in place" : "") + " rank " +
                     std::to_string(rank));
        Result<Schedule> s = buildSchedule(allToAll(rank, 3, 1000, 1024, inPlace), algorithm);
        ASSERT_TRUE(s.isOk()) << s.status().message();
        size_t sends = 0, blocks = 0;
        countSends(*s, &sends, &blocks);
        EXPECT_GT(sends, 2u);
        EXPECT_EQ(blocks, std::string(algorithm) == "ring" ? 0 : sends);
      }
    }
  }
  CollArgs v = allToAll(1, 3, 0, 1 << 20, false);
  v.kind = CollKind::kAllToAllv;
  v.sendCounts = {5, 0, 700};
  v.sendDispls = {0, 5, 5};
  v.recvCounts = {3, 0, 9};
  v.recvDispls = {9, 0, 0};
  for (const char* algorithm : {"pairwise", "direct"}) {
    Result<Schedule> s = buildSchedule(v, algorithm);
    ASSERT_TRUE(s.isOk()) << s.status().message();
    size_t sends = 0, blocks = 0;
    countSends(*s, &sends, &blocks);
    EXPECT_EQ(sends, 2u) << algorithm;  // one per peer, 700 elements in one chunk
    EXPECT_EQ(blocks, sends) << algorithm;
  }
  CollArgs ring = allToAll(0, 3, 1000, 1024, false);
  ring.kind = CollKind::kAllGather;
  Result<Schedule> s = buildSchedule(ring, "ring");
  ASSERT_TRUE(s.isOk()) << s.status().message();
  size_t sends = 0, blocks = 0;
  countSends(*s, &sends, &blocks);
  EXPECT_GT(sends, 0u);
  EXPECT_EQ(blocks, 0u);
}

}  // namespace
}  // namespace braid::coll
