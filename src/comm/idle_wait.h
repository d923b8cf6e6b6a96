// How a thread that drives collectives waits when nothing moved.
//
// Rounds without progress go through three phases: spin (a pause
// instruction per round) while the peer is likely running on another core,
// then yield the CPU (ranks that share cores let the peer we wait for run),
// then sleep in the transport until a peer rings. The spin length comes from
// the communicator (Comm::spinRounds: BRAID_SPIN; else 0 when local ranks
// outnumber the cores, 100 while pinned to a core of its own, 10 otherwise).
//
// The deadline (BRAID_TIMEOUT) counts from the last progress. Reading the
// clock costs as much as a small collective's poll on a VM, so it is read only
// at check points — every 64th idle round, and every round once spinning is
// over — and the deadline is armed at the first check point after progress,
// not at the first idle round: a collective that completes while spinning
// reads no clock at all.
#pragma once

#include <sched.h>

#include "core/deadline.h"

namespace braid {

class IdleWait {
 public:
  enum class Pause { kSpin, kYield, kSleep };

  IdleWait(double timeoutSeconds, int spinRounds)
      : timeoutSeconds_(timeoutSeconds), spinRounds_(spinRounds < 0 ? 0 : spinRounds) {}

  /// Something moved: the next idle round starts a new wait.
  void progressed() {
    idle_ = 0;
    armed_ = false;
  }

  /// True when the deadline has passed; call once per idle round, before next().
  bool expired() {
    if (idle_ % 64 != 63 && idle_ < spinRounds_) return false;
    if (!armed_) {
      deadline_ = Deadline::in(timeoutSeconds_);
      armed_ = true;
      return false;
    }
    return deadline_.expired();
  }

  /// Arms the deadline `seconds` from now (a stall report's grace period).
  void rearm(double seconds) {
    deadline_ = Deadline::in(seconds);
    armed_ = true;
  }

  /// Counts this idle round and says how to spend it.
  Pause next() {
    ++idle_;
    if (idle_ < spinRounds_) return Pause::kSpin;
    if (idle_ < spinRounds_ + kYieldRounds) return Pause::kYield;
    return Pause::kSleep;
  }

  /// Spends this idle round spinning or yielding, as next() says; false when the round
  /// is the caller's to sleep (in its transport, which only the caller knows).
  bool pauseBriefly() {
    switch (next()) {
      case Pause::kSpin:
        cpuRelax();
        return true;
      case Pause::kYield:
        yield();  // oversubscribed cores: let the peer we wait for run
        return true;
      case Pause::kSleep:
        break;
    }
    return false;
  }

  /// The deadline for a sleep (armed: sleeping rounds are check points).
  const Deadline& deadline() const { return deadline_; }
  double timeoutSeconds() const { return timeoutSeconds_; }

  /// Pauses the CPU briefly inside a spin loop.
  static void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  static void yield() { sched_yield(); }

 private:
  // Yields before sleeping. A sleep costs the waker a system call and the
  // sleeper a wake-up, while a yield hands the core to a rank sharing it and
  // comes back soon; with more ranks than cores a peer's reply usually needs
  // such a hand-over. 1000 yields are a few milliseconds at most, after which
  // a stalled wait sleeps as before (perf/RESULTS.md, "Waiting").
  static constexpr int kYieldRounds = 1000;

  const double timeoutSeconds_;
  const int spinRounds_;
  int idle_ = 0;
  bool armed_ = false;
  Deadline deadline_;
};

}  // namespace braid
