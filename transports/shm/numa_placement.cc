#include "transports/shm/numa_placement.h"

#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "transports/shm/shm_segment.h"

namespace braid::transport::shm {
namespace {

constexpr size_t kBitsPerWord = 8 * sizeof(unsigned long);
// Node numbers above this are refused before any system call (Linux allows 1024 at most).
constexpr int kMostNodes = 4096;

}  // namespace

std::vector<PagePlacement> segmentPlacement(const SegmentLayout& layout, int owner, int ownerNode) {
  std::vector<PagePlacement> pieces;
  if (ownerNode < 0 || layout.nranks < 2) return pieces;
  pieces.push_back({0, SegmentLayout::controlBytes(), ownerNode});
  for (int sender = 0; sender < layout.nranks; ++sender) {
    if (sender == owner) continue;
    pieces.push_back({layout.fifoOffset(owner, sender), layout.fifoBytes, ownerNode});
  }
  return pieces;
}

Status applyPlacement(void* base, const std::vector<PagePlacement>& placement) {
  for (size_t i = 0; i < placement.size();) {
    const int node = placement[i].node;
    const size_t begin = placement[i].offset;
    size_t end = begin + placement[i].bytes;
    // Neighbours on one node: one call, one mapping region in the kernel.
    for (++i; i < placement.size() && placement[i].node == node && placement[i].offset == end;
         ++i) {
      end += placement[i].bytes;
    }
    if (node < 0 || node >= kMostNodes) {
      return invalidArgument("NUMA node " + std::to_string(node) + " is out of range");
    }
    std::vector<unsigned long> mask(static_cast<size_t>(node) / kBitsPerWord + 1, 0);
    mask[static_cast<size_t>(node) / kBitsPerWord] = 1UL << (node % kBitsPerWord);
    // maxnode counts bits, and the kernel reads one fewer than it is given.
    const unsigned long maxNode = mask.size() * kBitsPerWord + 1;
    if (syscall(SYS_mbind, static_cast<uint8_t*>(base) + begin, end - begin, MPOL_PREFERRED,
                mask.data(), maxNode, 0) != 0) {
      return systemError(
          "cannot place shared memory on NUMA node " + std::to_string(node) + " (mbind)", errno);
    }
  }
  return Status::ok();
}

int preferredNodeAt(const void* addr) {
  int mode = -1;
  std::vector<unsigned long> mask(kMostNodes / kBitsPerWord, 0);
  if (syscall(SYS_get_mempolicy, &mode, mask.data(), kMostNodes, addr, MPOL_F_ADDR) != 0) {
    return -1;
  }
  if (mode != MPOL_PREFERRED) return -1;
  int node = -1;
  for (size_t w = 0; w < mask.size(); ++w) {
    for (size_t b = 0; b < kBitsPerWord; ++b) {
      if ((mask[w] >> b & 1) == 0) continue;
      if (node >= 0) return -1;  // several nodes: not what segmentPlacement asks for
      node = static_cast<int>(w * kBitsPerWord + b);
    }
  }
  return node;
}

int pageNodeAt(const void* addr) {
  int node = -1;
  if (syscall(SYS_get_mempolicy, &node, nullptr, 0, addr, MPOL_F_NODE | MPOL_F_ADDR) != 0) {
    return -1;
  }
  return node;
}

}  // namespace braid::transport::shm
