// Tells whether a peer process has died, so that a rank blocked on a crashed
// peer fails with an error naming it instead of waiting for the deadline.
//
// Prefers a pidfd (Linux >= 5.3): it becomes readable when the process exits,
// even while it is an unreaped zombie, and it cannot be fooled by pid reuse.
// Falls back to kill(pid, 0) plus the zombie state in /proc/<pid>/stat.
#pragma once

#include <cstdint>

namespace braid::transport::shm {

/// An identifier of this process's pid namespace (0 when unknown). Pids of
/// peers in another namespace mean nothing here, so they are not watched.
uint64_t pidNamespaceId();

class PeerWatch {
 public:
  /// Watches process `pid`. A watch on this very process (ranks on threads)
  /// or with `watchable` false never reports an exit.
  PeerWatch(int pid, bool watchable);
  PeerWatch(PeerWatch&& other) noexcept;
  PeerWatch& operator=(PeerWatch&&) = delete;
  PeerWatch(const PeerWatch&) = delete;
  ~PeerWatch();

  /// True once the process has exited (it may not be reaped yet). One system call.
  bool exited();

  int pid() const { return pid_; }
  bool watched() const { return watched_; }

 private:
  bool exitedWithoutPidfd() const;

  int pid_;
  bool watched_;
  int pidfd_ = -1;
  bool exited_ = false;  // sticky: a dead process stays dead
};

}  // namespace braid::transport::shm
