// Whether this machine has a CUDA device: every GPU test skips without one (GTEST_SKIP, or
// exit 77 for the forked-rank tests), and a few check the no-device path only then.
#pragma once

#include <cuda_runtime.h>

namespace braid::testing {

inline bool haveCudaDevice() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

}  // namespace braid::testing
