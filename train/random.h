/*
 * Counter-based randomness: every value is a pure function of (seed, stream,
 * index), so that a tensor-parallel shard can draw exactly the weights the
 * same slice of the unsharded layer would get, without drawing the rest.
 * The mixer is SplitMix64's finaliser (Steele, Lea, Flood 2014).
 */
#pragma once

#include <cmath>
#include <cstdint>

namespace braid::train {

inline uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// A uniform in (0, 1), never exactly 0 or 1.
inline double uniformAt(uint64_t seed, uint64_t stream, uint64_t index) {
  uint64_t bits = mix64(mix64(seed ^ mix64(stream)) + index);
  return (static_cast<double>(bits >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/// A standard normal value at (seed, stream, index) by Box-Muller.
inline double normalAt(uint64_t seed, uint64_t stream, uint64_t index) {
  double u1 = uniformAt(seed, stream, 2 * index);
  double u2 = uniformAt(seed, stream, 2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

/// A sequential generator for shuffles.
class Rng {
 public:
  Rng(uint64_t seed, uint64_t stream) : state_(mix64(seed) ^ mix64(stream + 1)) {}
  uint64_t next() { return mix64(state_++); }

 private:
  uint64_t state_;
};

}  // namespace braid::train
