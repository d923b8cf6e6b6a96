#include "braidrun/signal_pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace braid::run {
namespace {

// The one write end the handler can see; -1 when no SignalPipe is installed.
volatile sig_atomic_t gWriteFd = -1;

void onSignal(int signal) {
  int savedErrno = errno;  // write() may clobber errno under the interrupted code
  unsigned char byte = static_cast<unsigned char>(signal);
  // A full pipe means hundreds of unread signals; losing one more is harmless
  // because SIGCHLD handling reaps every exited rank, not one per byte.
  [[maybe_unused]] ssize_t n = ::write(gWriteFd, &byte, 1);
  errno = savedErrno;
}

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP};

}  // namespace

bool SignalPipe::install(std::string* error) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    *error = std::string("cannot create the signal pipe: ") + std::strerror(errno);
    return false;
  }
  readEnd_.reset(fds[0]);
  writeEnd_.reset(fds[1]);
  gWriteFd = writeEnd_.get();
  sigprocmask(SIG_SETMASK, nullptr, &originalMask_);
  sigemptyset(&caughtSet_);

  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;

  auto installOne = [&](int signal, const struct sigaction& replacement) {
    Saved saved{signal, {}};
    sigaction(signal, &replacement, &saved.action);
    saved_.push_back(saved);
    sigaddset(&caughtSet_, signal);
  };
  struct sigaction childAction = action;
  childAction.sa_flags |= SA_NOCLDSTOP;  // stopped ranks are not finished ranks
  installOne(SIGCHLD, childAction);
  for (int signal : kForwardedSignals) {
    struct sigaction current {};
    sigaction(signal, nullptr, &current);
    // A shell starts background jobs with SIGINT ignored; honour that instead
    // of turning a keyboard interrupt meant for the foreground into a kill.
    if (current.sa_handler != SIG_IGN) installOne(signal, action);
  }
  // Writing tagged output into a closed pipe (braidrun ... | head) must show
  // up as EPIPE to handle, not kill the launcher and orphan the ranks.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  installOne(SIGPIPE, ignore);
  installed_ = true;
  // A parent that started braidrun with these signals blocked would otherwise
  // hide every rank's exit from the loop.
  unblockSignals();
  return true;
}

SignalPipe::~SignalPipe() {
  if (!installed_) return;
  for (const Saved& saved : saved_) sigaction(saved.signal, &saved.action, nullptr);
  gWriteFd = -1;
}

std::vector<int> SignalPipe::takePending() {
  std::vector<int> signals;
  unsigned char buffer[64];
  for (;;) {
    ssize_t n = ::read(readEnd_.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    signals.insert(signals.end(), buffer, buffer + n);
  }
  return signals;
}

void SignalPipe::blockSignals() { sigprocmask(SIG_BLOCK, &caughtSet_, nullptr); }

void SignalPipe::unblockSignals() { sigprocmask(SIG_UNBLOCK, &caughtSet_, nullptr); }

void SignalPipe::restoreInChild() const {
  for (const Saved& saved : saved_) sigaction(saved.signal, &saved.action, nullptr);
  sigprocmask(SIG_SETMASK, &originalMask_, nullptr);
}

}  // namespace braid::run
