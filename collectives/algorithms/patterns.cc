#include "collectives/algorithms/patterns.h"

#include <algorithm>

namespace braid::coll {

int ringPeer(int rank, int nranks, long distance) {
  long wrapped = (static_cast<long>(rank) + distance) % nranks;
  return static_cast<int>(wrapped < 0 ? wrapped + nranks : wrapped);
}

Slice evenSlice(size_t count, int parts, int index) {
  size_t base = count / parts;
  size_t extra = count % parts;
  size_t i = static_cast<size_t>(index);
  return Slice{i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

size_t chunkElems(size_t chunkBytes, size_t elemBytes) {
  return std::max<size_t>(1, chunkBytes / elemBytes);
}

size_t numChunks(size_t count, size_t perChunk) { return (count + perChunk - 1) / perChunk; }

Slice chunkOf(Slice slice, size_t perChunk, size_t index) {
  size_t begin = std::min(slice.count, index * perChunk);
  size_t end = std::min(slice.count, begin + perChunk);
  return Slice{slice.offset + begin, end - begin};
}

namespace {

// The in-order tree over labels 1..m described in patterns.h.
int lowestBit(int label) { return label & -label; }

// Distance from `label` to its right child, 0 when it has none.
int rightChildStep(int label, int m) {
  int step = lowestBit(label) / 2;
  while (step > 0 && label + step > m) step /= 2;
  return step;
}

int treeRootLabel(int m) {
  int root = 1;
  while (root * 2 <= m) root *= 2;
  return root;
}

// Walks from the tree's root to `label`; returns its parent's label (0 at the
// root) and its depth below the tree's root.
int parentLabel(int label, int m, int* depth) {
  int node = treeRootLabel(m);
  int parent = 0;
  *depth = 0;
  while (node != label) {
    parent = node;
    ++*depth;
    node += label < node ? -lowestBit(node) / 2 : rightChildStep(node, m);
  }
  return parent;
}

}  // namespace

TreeNode doubleTreeNode(int rank, int nranks, int root, int which) {
  TreeNode node;
  int m = nranks - 1;  // ranks below the root
  if (m == 0) return node;
  // Chain position 1..m maps to label 1..m in tree 0 and to the next label, wrapping, in tree 1.
  auto labelOf = [&](int position) { return which == 0 ? position : position % m + 1; };
  auto rankOf = [&](int label) {
    int position = which == 0 ? label : (label + m - 2) % m + 1;
    return ringPeer(root, nranks, position);
  };
  int position = ringPeer(rank, nranks, -root);
  if (position == 0) {
    node.children[0] = rankOf(treeRootLabel(m));
    node.numChildren = 1;
    return node;
  }
  int label = labelOf(position);
  int depthBelowTop = 0;
  int parent = parentLabel(label, m, &depthBelowTop);
  node.parent = parent == 0 ? root : rankOf(parent);
  node.depth = depthBelowTop + 1;
  if (lowestBit(label) >= 2) {
    node.children[node.numChildren++] = rankOf(label - lowestBit(label) / 2);
    int right = rightChildStep(label, m);
    if (right > 0) node.children[node.numChildren++] = rankOf(label + right);
  }
  return node;
}

int doubleTreeDepth(int nranks) {
  int m = nranks - 1;
  int depth = 0;
  // The tree's root sits at depth 1 and every level halves the label step: floor(log2 m) + 1.
  for (int span = m; span > 0; span /= 2) ++depth;
  return depth;
}

}  // namespace braid::coll
