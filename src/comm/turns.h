// Turns: runs steps of several threads one at a time in a fixed order (tickets).
//
// The derivations (split, shrink, grow) queued in one group run at braidGroupEnd on threads of
// their own. Two of them on the same parent both exchange over the parent's bootstrap, which
// carries one exchange at a time, so they must take turns, and in the order they were called:
// every rank calls them in the same order, so the n-th exchange of one rank meets the n-th of
// every other. A ticket is taken at the call, the turn waited for at braidGroupEnd.
#pragma once

#include <condition_variable>
#include <mutex>

namespace braid {

class Turns {
 public:
  /// The next ticket, in call order (from the group's thread).
  int take() {
    std::lock_guard<std::mutex> lock(mu_);
    return issued_++;
  }

  /// Holds the turn of `ticket` for its lifetime: waits until every earlier ticket's turn has
  /// ended, and ends this one (whatever the step's outcome) when destroyed.
  class Turn {
   public:
    Turn(Turns& turns, int ticket) : turns_(turns) {
      std::unique_lock<std::mutex> lock(turns_.mu_);
      turns_.cv_.wait(lock, [&] { return turns_.current_ == ticket; });
    }
    ~Turn() {
      {
        std::lock_guard<std::mutex> lock(turns_.mu_);
        ++turns_.current_;
      }
      turns_.cv_.notify_all();
    }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

   private:
    Turns& turns_;
  };

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int issued_ = 0;
  int current_ = 0;
};

}  // namespace braid
