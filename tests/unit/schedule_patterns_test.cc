// The pure peer and chunk arithmetic behind the schedule builders.
#include <gtest/gtest.h>

#include <vector>

#include "collectives/algorithms/patterns.h"

namespace braid::coll {
namespace {

TEST(RingPeerTest, NeighboursWrapAround) {
  EXPECT_EQ(ringNext(0, 1), 0);
  EXPECT_EQ(ringPrev(0, 1), 0);
  EXPECT_EQ(ringNext(3, 4), 0);
  EXPECT_EQ(ringPrev(0, 4), 3);
  EXPECT_EQ(ringNext(1, 5), 2);
  EXPECT_EQ(ringPrev(1, 5), 0);
  EXPECT_EQ(ringPeer(2, 5, -7), 0);
  EXPECT_EQ(ringPeer(2, 5, 13), 0);
  for (int n = 1; n <= 9; ++n) {
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(ringPrev(ringNext(r, n), n), r);
      EXPECT_EQ(ringPeer(r, n, n), r);
      EXPECT_EQ(ringPeer(r, n, -r), 0);
    }
  }
}

TEST(EvenSliceTest, CoversCountWithSizesDifferingByAtMostOne) {
  EXPECT_EQ(evenSlice(10, 4, 0).count, 3u);
  EXPECT_EQ(evenSlice(10, 4, 1).offset, 3u);
  EXPECT_EQ(evenSlice(10, 4, 3).offset, 8u);
  EXPECT_EQ(evenSlice(10, 4, 3).count, 2u);
  for (size_t count : {0, 1, 7, 8, 1000, 1001}) {
    for (int parts = 1; parts <= 9; ++parts) {
      size_t next = 0;
      for (int i = 0; i < parts; ++i) {
        Slice s = evenSlice(count, parts, i);
        EXPECT_EQ(s.offset, next) << count << "/" << parts << " part " << i;
        EXPECT_LE(s.count, evenSlice(count, parts, 0).count);
        EXPECT_GE(s.count + 1, evenSlice(count, parts, 0).count);
        next += s.count;
      }
      EXPECT_EQ(next, count);
    }
  }
}

TEST(ChunkTest, RoundsDownToWholeElementsAndCoversSlices) {
  EXPECT_EQ(chunkElems(8, 4), 2u);
  EXPECT_EQ(chunkElems(11, 4), 2u);
  EXPECT_EQ(chunkElems(3, 4), 1u);  // smaller than an element: still one element
  EXPECT_EQ(chunkElems(0, 8), 1u);
  EXPECT_EQ(numChunks(0, 5), 0u);
  EXPECT_EQ(numChunks(10, 5), 2u);
  EXPECT_EQ(numChunks(11, 5), 3u);
  Slice slice{100, 11};
  EXPECT_EQ(chunkOf(slice, 5, 2).offset, 110u);
  EXPECT_EQ(chunkOf(slice, 5, 2).count, 1u);
  EXPECT_EQ(chunkOf(slice, 5, 3).count, 0u);
  for (size_t per : {1, 2, 3, 64}) {
    size_t next = slice.offset;
    for (size_t c = 0; c < numChunks(slice.count, per); ++c) {
      Slice part = chunkOf(slice, per, c);
      EXPECT_EQ(part.offset, next);
      EXPECT_GE(part.count, 1u);
      EXPECT_LE(part.count, per);
      next += part.count;
    }
    EXPECT_EQ(next, slice.offset + slice.count);
  }
}

TEST(DoubleTreeTest, FourRanksByHand) {
  // Below root 0: labels 1..3 with 2 on top. Tree 0 labels rank p as p;
  // tree 1 labels it p % 3 + 1, so rank 1 (label 2) is its top.
  TreeNode top = doubleTreeNode(0, 4, 0, 0);
  EXPECT_EQ(top.parent, -1);
  ASSERT_EQ(top.numChildren, 1);
  EXPECT_EQ(top.children[0], 2);
  TreeNode mid = doubleTreeNode(2, 4, 0, 0);
  EXPECT_EQ(mid.parent, 0);
  EXPECT_EQ(mid.depth, 1);
  ASSERT_EQ(mid.numChildren, 2);
  EXPECT_EQ(mid.children[0], 1);
  EXPECT_EQ(mid.children[1], 3);
  EXPECT_EQ(doubleTreeNode(0, 4, 0, 1).children[0], 1);
  TreeNode other = doubleTreeNode(1, 4, 0, 1);
  ASSERT_EQ(other.numChildren, 2);
  EXPECT_EQ(other.children[0], 3);
  EXPECT_EQ(other.children[1], 2);
  EXPECT_EQ(doubleTreeNode(3, 4, 0, 1).depth, 2);
  EXPECT_EQ(doubleTreeDepth(4), 2);
}

TEST(DoubleTreeTest, SpanningBalancedTreesForManySizesAndRoots) {
  for (int n = 1; n <= 40; ++n) {
    for (int root : {0, 1, n / 2, n - 1}) {
      if (root >= n) continue;
      std::vector<int> totalChildren(n, 0);
      for (int which = 0; which < 2; ++which) {
        SCOPED_TRACE("n=" + std::to_string(n) + " root=" + std::to_string(root) +
                     " tree=" + std::to_string(which));
        int deepest = 0;
        for (int r = 0; r < n; ++r) {
          TreeNode node = doubleTreeNode(r, n, root, which);
          deepest = std::max(deepest, node.depth);
          totalChildren[r] += node.numChildren;
          ASSERT_LE(node.numChildren, 2);
          for (int i = 0; i < node.numChildren; ++i) {
            TreeNode child = doubleTreeNode(node.children[i], n, root, which);
            ASSERT_EQ(child.parent, r);
            ASSERT_EQ(child.depth, node.depth + 1);
          }
          if (r == root) {
            ASSERT_EQ(node.parent, -1);
            ASSERT_EQ(node.numChildren, n > 1 ? 1 : 0);
            continue;
          }
          // Walking up reaches the root, and the parent lists r as a child.
          TreeNode parent = doubleTreeNode(node.parent, n, root, which);
          bool listed = false;
          for (int i = 0; i < parent.numChildren; ++i) listed |= parent.children[i] == r;
          ASSERT_TRUE(listed) << "rank " << r;
          int hops = 0;
          for (int at = r; at != root; at = doubleTreeNode(at, n, root, which).parent) {
            ASSERT_LT(++hops, n) << "rank " << r << " never reaches the root";
          }
          ASSERT_EQ(hops, node.depth);
        }
        ASSERT_EQ(deepest, doubleTreeDepth(n));
      }
      // Interior in one tree, leaf in the other: no rank below the root feeds more
      // than two children in total.
      for (int r = 0; r < n; ++r) {
        if (r == root) continue;
        EXPECT_LE(totalChildren[r], 2) << "n=" << n << " rank " << r;
      }
    }
  }
}

}  // namespace
}  // namespace braid::coll
