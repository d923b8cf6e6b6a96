// Deadlines: every wait in braid has one (BRAID_TIMEOUT), so nothing hangs forever.
#pragma once

#include <chrono>

namespace braid {

using Clock = std::chrono::steady_clock;

class Deadline {
 public:
  /// A deadline `seconds` from now; seconds <= 0 means "never" (used only by tests).
  static Deadline in(double seconds) {
    Deadline d;
    if (seconds > 0) {
      d.at_ = Clock::now() +
              std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    }
    return d;
  }
  static Deadline never() { return Deadline(); }

  bool expired() const { return at_ != Clock::time_point::max() && Clock::now() >= at_; }
  Clock::time_point at() const { return at_; }
  /// Milliseconds left, clamped to [0, cap].
  int remainingMs(int cap) const {
    if (at_ == Clock::time_point::max()) return cap;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now()).count();
    if (left < 0) return 0;
    return left > cap ? cap : static_cast<int>(left);
  }

 private:
  Clock::time_point at_ = Clock::time_point::max();
};

}  // namespace braid
