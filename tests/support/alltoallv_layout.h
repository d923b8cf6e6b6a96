// The all-to-all-v buffers of the device-proxy send/recv tests
// (tests/unit/device_proxy_p2p_test.cc on the CPU fake, tests/gpu/device_proxy_p2p_gpu_test.cc
// on a GPU): uneven blocks, some empty, in rank order, each after kAllToAllvGap elements
// that hold poison and that no call may write. Header only, standard library only: the GPU
// test links nothing but the public library.
#pragma once

#include <cstddef>
#include <vector>

namespace braid::testing {

constexpr size_t kAllToAllvGap = 3;

/// Elements rank `from` sends rank `to`: some zero; symmetric counts (a -> b as b -> a)
/// allow the in-place form. `scale` makes the blocks larger (the GPU test's pieces).
inline size_t allToAllvCount(int from, int to, bool symmetric, size_t scale = 1) {
  return symmetric ? size_t((from + to) % 3) * 50 * scale + 1
                   : size_t((from + 2 * to) % 3) * 97 * scale;
}

/// One side of one rank's call: counts and displacements as the C API takes them, and the
/// buffer's length in elements.
struct AllToAllvLayout {
  std::vector<size_t> counts, displs;
  size_t total = 0;
};

/// Rank `self`'s send (`sending`) or receive layout among `nranks`.
inline AllToAllvLayout allToAllvLayout(int self, int nranks, bool sending, bool symmetric,
                                       size_t scale = 1) {
  AllToAllvLayout l;
  for (int peer = 0; peer < nranks; ++peer) {
    l.counts.push_back(sending ? allToAllvCount(self, peer, symmetric, scale)
                               : allToAllvCount(peer, self, symmetric, scale));
    l.total += kAllToAllvGap;
    l.displs.push_back(l.total);
    l.total += l.counts.back();
  }
  return l;
}

}  // namespace braid::testing
