// What the ranks of braid-nccl-compare share: a barrier, the flags that say whether NCCL and
// braid still run, each rank's last time, NCCL's unique id and the first error of each
// library. Plain atomics and arrays, so the same struct works on the heap (ranks as threads)
// and in a MAP_SHARED mapping made before fork (ranks as processes).
#pragma once

#include <nccl.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>

namespace braid::perf {

constexpr int kMaxRanks = 64;

struct SharedState {
  std::atomic<int> arrived{0};
  std::atomic<int> generation{0};
  std::atomic<bool> ncclOn{true};
  std::atomic<bool> failed{false};
  std::atomic<bool> idReady{false};
  std::atomic<bool> ncclInitRefused{false};  // ncclCommInitRank failed (not a load failure)
  std::atomic<bool> ncclErrorSet{false};
  std::atomic<bool> braidErrorSet{false};
  ncclUniqueId ncclId{};
  double times[kMaxRanks] = {};
  char ncclError[512] = {};
  char braidError[512] = {};

  /// Blocks until `n` ranks arrived (reusable: a generation count, bumped by the last one).
  void arriveAndWait(int n) {
    const int gen = generation.load(std::memory_order_acquire);
    if (arrived.fetch_add(1, std::memory_order_acq_rel) == n - 1) {
      arrived.store(0, std::memory_order_relaxed);
      generation.fetch_add(1, std::memory_order_release);
      return;
    }
    while (generation.load(std::memory_order_acquire) == gen) std::this_thread::yield();
  }

  /// Keeps the first message of each kind; returns whether this one was the first.
  bool setNcclError(const std::string& why) { return setOnce(ncclErrorSet, ncclError, why); }
  bool setBraidError(const std::string& why) { return setOnce(braidErrorSet, braidError, why); }

 private:
  static bool setOnce(std::atomic<bool>& flag, char* slot, const std::string& why) {
    bool expected = false;
    if (!flag.compare_exchange_strong(expected, true)) return false;
    std::strncpy(slot, why.c_str(), 511);
    return true;
  }
};

}  // namespace braid::perf
