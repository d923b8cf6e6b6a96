// SignalPipe: turns signals into bytes on a pipe, so that the supervision loop
// sees SIGCHLD and the user's SIGINT/SIGTERM/SIGHUP through the same poll() as
// the ranks' output and its own deadlines (the self-pipe trick). The handler
// does nothing but write(), which is async-signal-safe.
#pragma once

#include <signal.h>

#include <string>
#include <vector>

#include "braidrun/unique_fd.h"

namespace braid::run {

class SignalPipe {
 public:
  SignalPipe() = default;
  ~SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  /// Installs the handlers. Only one SignalPipe may be installed at a time,
  /// because a signal handler can reach its pipe only through a global.
  bool install(std::string* error);

  /// The read end, for poll().
  int fd() const { return readEnd_.get(); }

  /// The signals caught since the last call, oldest first.
  std::vector<int> takePending();

  /// Blocks the caught signals; fork() happens under this block so that a signal
  /// arriving between fork and exec cannot run braidrun's handler in the child.
  void blockSignals();
  void unblockSignals();

  /// Called in the child between fork and exec: gives the program the signal
  /// dispositions and mask that braidrun itself was started with (so that a
  /// SIGINT ignored by the shell stays ignored). Async-signal-safe.
  void restoreInChild() const;

 private:
  struct Saved {
    int signal;
    struct sigaction action;
  };
  UniqueFd readEnd_, writeEnd_;
  std::vector<Saved> saved_;
  sigset_t originalMask_{};
  sigset_t caughtSet_{};  // every signal with a handler (or SIG_IGN) installed here
  bool installed_ = false;
};

}  // namespace braid::run
