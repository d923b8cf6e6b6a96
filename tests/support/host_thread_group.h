// Several host threads acting as one CUDA thread block, for CPU tests of the device
// executor: the same Group interface as collectives/device/portability.h (rank, size,
// leader, sync, agree, any) over a std::barrier. It exercises what a single-thread group
// cannot — strided data loops, leader-only state changes read by the others after a
// barrier, and every thread taking the same branch — and ThreadSanitizer checks the
// barriers really order those accesses.
#pragma once

#include <atomic>
#include <barrier>

namespace braid::testing {

class HostThreadGroup {
 public:
  explicit HostThreadGroup(int size) : size_(size), barrier_(size) {}

  /// The view one member thread passes to the device code as its Group.
  class Member {
   public:
    Member(HostThreadGroup* group, int rank) : group_(group), rank_(rank) {}
    int rank() const { return rank_; }
    int size() const { return group_->size_; }
    bool leader() const { return rank_ == 0; }
    void sync() const { group_->barrier_.arrive_and_wait(); }
    bool agree(bool value) const {
      if (leader()) group_->agreed_.store(value ? 1 : 0, std::memory_order_relaxed);
      sync();
      const bool result = group_->agreed_.load(std::memory_order_relaxed) != 0;
      sync();
      return result;
    }
    bool any(bool value) const {
      if (value) group_->votes_.fetch_add(1, std::memory_order_relaxed);
      sync();
      const bool result = group_->votes_.load(std::memory_order_relaxed) != 0;
      sync();
      if (leader()) group_->votes_.store(0, std::memory_order_relaxed);
      sync();
      return result;
    }

   private:
    HostThreadGroup* group_;
    int rank_;
  };

 private:
  const int size_;
  std::barrier<> barrier_;
  std::atomic<int> agreed_{0};  // the leader's value in agree()
  std::atomic<int> votes_{0};   // any()'s count of true values; zero between calls
};

}  // namespace braid::testing
