// The process-wide set of server threads (see server_threads.h).
#include "bootstrap/server_threads.h"

#include <openssl/crypto.h>
#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace braid::bootstrap {
namespace {

class ServerThreads {
 public:
  static ServerThreads& instance() {
    // Never destroyed, so that a server left behind never finds its lock gone; the exit
    // runs stopAll(), registered after OpenSSL's clean-up so that it runs before it.
    static ServerThreads* const threads = [] {
      OPENSSL_init_crypto(0, nullptr);
      auto* made = new ServerThreads;
      std::atexit([] { instance().stopAll(); });
      return made;
    }();
    return *threads;
  }

  // Detached, so that a process leaving by _exit() (a forked rank) leaks no joinable
  // thread; stopAll() waits on the list instead of joining.
  void start(std::function<void()> serve, std::function<void()> stop) {
    std::lock_guard<std::mutex> lock(mu_);
    auto entry = running_.insert(running_.end(), std::move(stop));
    try {
      std::thread([this, entry, serve = std::move(serve)]() mutable {
        serve();
        serve = nullptr;  // the server is released before the exit can stop waiting
        // OpenSSL's per-thread state is freed now, not by a thread-exit destructor that
        // could run after the exit stopped waiting and OpenSSL was cleaned up.
        OPENSSL_thread_stop();
        std::lock_guard<std::mutex> done(mu_);
        running_.erase(entry);
        finished_.notify_all();
      }).detach();
    } catch (...) {
      running_.erase(entry);  // no thread: nothing for the exit to wait for
      throw;
    }
  }

  void stopAll() {
    std::unique_lock<std::mutex> lock(mu_);
    for (std::function<void()>& stop : running_) stop();
    // A server stuck past the grace period is left behind: exiting beats hanging.
    finished_.wait_for(lock, std::chrono::duration<double>(kExitGraceSeconds),
                       [this] { return running_.empty(); });
  }

 private:
  ServerThreads() {
    // A forked child copies the list but not the threads: it must neither stop nor wait
    // for them. The lock is held across fork() so the child's copy of it is consistent.
    ::pthread_atfork([] { instance().mu_.lock(); }, [] { instance().mu_.unlock(); },
                     [] {
                       ServerThreads& self = instance();
                       // Set aside, never called: the closures belong to the parent's servers.
                       self.abandoned_.splice(self.abandoned_.end(), self.running_);
                       self.mu_.unlock();
                     });
  }

  std::mutex mu_;
  std::condition_variable finished_;
  std::list<std::function<void()>> running_;    // each server's stop; a list keeps entries put
  std::list<std::function<void()>> abandoned_;  // a forked child's copy of its parent's
};

}  // namespace

void startServerThread(std::function<void()> serve, std::function<void()> stop) {
  ServerThreads::instance().start(std::move(serve), std::move(stop));
}

}  // namespace braid::bootstrap
