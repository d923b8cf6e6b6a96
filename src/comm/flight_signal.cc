#include "comm/flight_signal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "comm/flight_recorder.h"
#include "core/log.h"

namespace braid {
namespace {

// Read by the handler: lock-free atomics only.
std::atomic<int> gWakeFd{-1};
std::atomic<int> gInHandler{0};
struct sigaction gPrevious;

// The signal BRAID_FLIGHT_RECORDER_SIGNAL names, or 0 when unset or unknown.
int signalFromEnv() {
  const char* v = std::getenv("BRAID_FLIGHT_RECORDER_SIGNAL");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "0") == 0) return 0;
  if (strcasecmp(v, "USR1") == 0 || strcasecmp(v, "SIGUSR1") == 0 || std::strcmp(v, "1") == 0) {
    return SIGUSR1;
  }
  if (strcasecmp(v, "USR2") == 0 || strcasecmp(v, "SIGUSR2") == 0) return SIGUSR2;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end == '\0' && n > 0 && n < NSIG && n != SIGKILL && n != SIGSTOP) return static_cast<int>(n);
  BRAID_WARN("BRAID_FLIGHT_RECORDER_SIGNAL=%s names no usable signal; no handler installed", v);
  return 0;
}

void onSignal(int sig, siginfo_t* info, void* context) {
  gInHandler.fetch_add(1);
  const int savedErrno = errno;
  const int fd = gWakeFd.load();
  if (fd >= 0) {
    const char byte = 1;
    [[maybe_unused]] ssize_t n = write(fd, &byte, 1);  // a full pipe already has a wake-up queued
  }
  if (gPrevious.sa_flags & SA_SIGINFO) {
    if (gPrevious.sa_sigaction != nullptr) gPrevious.sa_sigaction(sig, info, context);
  } else if (gPrevious.sa_handler != SIG_DFL && gPrevious.sa_handler != SIG_IGN) {
    gPrevious.sa_handler(sig);
  }
  errno = savedErrno;
  gInHandler.fetch_sub(1);
}

class SignalPrinter {
 public:
  void add(const FlightRecorder* recorder) {
    std::lock_guard<std::mutex> lock(mu_);
    if (recorders_.empty()) start();
    recorders_.insert(recorder);
  }

  void remove(const FlightRecorder* recorder) {
    std::thread stopping;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (recorders_.erase(recorder) == 0 || !recorders_.empty()) return;
      stopping = stop();
    }
    if (stopping.joinable()) stopping.join();  // outside mu_: the thread may want it
  }

 private:
  // Called with mu_ held, when the first recorder arrives.
  void start() {
    signal_ = signalFromEnv();
    if (signal_ == 0) return;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
      BRAID_WARN("flight recorder: pipe2 failed (%s); no signal handler", std::strerror(errno));
      signal_ = 0;
      return;
    }
    readFd_ = fds[0];
    gWakeFd.store(fds[1]);
    struct sigaction action {};
    action.sa_sigaction = onSignal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(signal_, &action, &gPrevious);
    thread_ = std::thread([this] { run(); });
  }

  // Called with mu_ held, when the last recorder leaves; returns the thread to join.
  std::thread stop() {
    if (signal_ == 0) return std::thread();
    sigaction(signal_, &gPrevious, nullptr);
    const int writeFd = gWakeFd.exchange(-1);
    while (gInHandler.load() > 0) std::this_thread::yield();  // a handler may still hold writeFd
    close(writeFd);                                           // the thread reads EOF and ends
    signal_ = 0;
    return std::move(thread_);
  }

  void run() {
    const int fd = readFd_;
    while (true) {
      pollWait(fd);
      char bytes[64];
      ssize_t n = read(fd, bytes, sizeof(bytes));
      if (n == 0) break;  // the write end closed: last communicator gone
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        break;
      }
      std::lock_guard<std::mutex> lock(mu_);
      for (const FlightRecorder* r : recorders_) r->print("on signal", true);
    }
    close(fd);
  }

  static void pollWait(int fd) {
    pollfd p{fd, POLLIN, 0};
    while (poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
  }

  std::mutex mu_;  // guards recorders_ and the handler's installation
  std::set<const FlightRecorder*> recorders_;
  int signal_ = 0;
  int readFd_ = -1;
  std::thread thread_;
};

SignalPrinter& printer() {
  static SignalPrinter* p = new SignalPrinter();  // never destroyed: comms may outlive statics
  return *p;
}

}  // namespace

void registerFlightRecorder(const FlightRecorder* recorder) { printer().add(recorder); }
void unregisterFlightRecorder(const FlightRecorder* recorder) { printer().remove(recorder); }

}  // namespace braid
