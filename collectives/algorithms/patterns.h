// Pure peer and chunk arithmetic shared by the schedule builders.
//
// Everything here is a function of (rank, nranks, sizes) only, so unit tests
// call it directly and every rank computes the same answer for its peers.
//
// Rings run 0 -> 1 -> ... -> n-1 -> 0. Chains (rooted rings) run from the
// root: position d of the chain is rank (root + d) mod n.
//
// The double binary tree: the root sits on top; below it hang two binary
// trees, each spanning the other m = n-1 ranks. A tree is the in-order tree
// over labels 1..m in which a label's lowest set bit gives its height: odd
// labels are leaves, the largest power of two <= m is the tree's root, and a
// node 2^k*q has children at +-2^(k-1) (the right one shrunk by halves until
// it fits in 1..m). Tree 0 gives the rank at chain position i+1 the label
// i+1; tree 1 shifts the labels by one, so a rank that is interior (even
// label) in one tree is a leaf in the other: no rank has more than two
// children over both trees, which balances the bandwidth of a tree
// all-reduce. Children are listed in a fixed order (left, right) that the
// builders use as the reduction order, which keeps results deterministic.
#pragma once

#include <cstddef>

namespace braid::coll {

/// `rank` moved `distance` hops along the ring 0 -> 1 -> ... -> n-1 -> 0 (distance may be < 0).
int ringPeer(int rank, int nranks, long distance);
inline int ringNext(int rank, int nranks) { return ringPeer(rank, nranks, 1); }
inline int ringPrev(int rank, int nranks) { return ringPeer(rank, nranks, -1); }

/// A run of elements: [offset, offset + count).
struct Slice {
  size_t offset = 0;
  size_t count = 0;
};

/// Part `index` of `count` elements cut into `parts` nearly equal slices; the first
/// count % parts slices hold one element more.
Slice evenSlice(size_t count, int parts, int index);

/// Elements per pipelining chunk: chunkBytes rounded down to whole elements, at least one.
size_t chunkElems(size_t chunkBytes, size_t elemBytes);

/// How many chunks of `perChunk` elements cover `count` elements (0 when count is 0).
size_t numChunks(size_t count, size_t perChunk);

/// Chunk `index` of `slice` (an empty slice past its end).
Slice chunkOf(Slice slice, size_t perChunk, size_t index);

/// One rank's place in a tree. Children are listed in reduction order.
struct TreeNode {
  int parent = -1;  // -1 at the root
  int children[2] = {-1, -1};
  int numChildren = 0;
  int depth = 0;  // hops from the root
};

/// The place of `rank` in tree `which` (0 or 1) of the double binary tree over
/// `nranks` ranks with `root` on top.
TreeNode doubleTreeNode(int rank, int nranks, int root, int which);

/// The depth of the deepest rank in either tree of the double binary tree (0 for one rank).
int doubleTreeDepth(int nranks);

}  // namespace braid::coll
