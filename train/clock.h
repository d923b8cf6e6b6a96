/*
 * The one clock of the harness: monotonic wall time in seconds.
 */
#pragma once

#include <chrono>

namespace braid::train {

inline double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace braid::train
