// The process-wide set of server threads (see server_threads.h).
#include "bootstrap/server_threads.h"

#include <openssl/crypto.h>
#include <pthread.h>

#include <chrono>
#include <condition_variable>
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
    // Initialising OpenSSL first registers its clean-up before this object's destructor,
    // so at exit the servers are joined while OpenSSL still works.
    static const bool opensslReady = OPENSSL_init_crypto(0, nullptr) == 1;
    (void)opensslReady;
    static ServerThreads threads;
    return threads;
  }

  void start(std::function<void()> serve, std::function<void()> stop) {
    std::lock_guard<std::mutex> lock(mu_);
    joinFinished();
    Server& server = servers_.emplace_back();
    server.stop = std::move(stop);
    server.thread = std::thread([this, &server, serve = std::move(serve)] {
      serve();
      std::lock_guard<std::mutex> done(mu_);
      server.done = true;
      finished_.notify_all();
    });
  }

  ~ServerThreads() {
    std::unique_lock<std::mutex> lock(mu_);
    for (Server& server : servers_) {
      if (!server.done) server.stop();
    }
    finished_.wait_for(lock, std::chrono::duration<double>(kExitGraceSeconds), [this] {
      for (const Server& server : servers_) {
        if (!server.done) return false;
      }
      return true;
    });
    for (Server& server : servers_) {
      if (server.done) {
        server.thread.join();
      } else {
        server.thread.detach();  // stuck past the grace period; exiting beats hanging
      }
    }
  }

 private:
  struct Server {
    std::thread thread;
    std::function<void()> stop;
    bool done = false;  // guarded by mu_
  };

  ServerThreads() {
    // A forked child gets copies of the handles but not the threads: it must never join
    // them. The lock is held across fork() so the child's copy of it is consistent.
    ::pthread_atfork([] { instance().mu_.lock(); }, [] { instance().mu_.unlock(); },
                     [] {
                       ServerThreads& self = instance();
                       new std::list<Server>(std::move(self.servers_));  // left, never joined
                       self.servers_.clear();
                       self.mu_.unlock();
                     });
  }

  // Called with mu_ held, so the list does not grow with every communicator made.
  void joinFinished() {
    for (auto it = servers_.begin(); it != servers_.end();) {
      if (!it->done) {
        ++it;
        continue;
      }
      it->thread.join();
      it = servers_.erase(it);
    }
  }

  std::mutex mu_;
  std::condition_variable finished_;
  std::list<Server> servers_;  // a list: each thread holds a reference to its own entry
};

}  // namespace

void startServerThread(std::function<void()> serve, std::function<void()> stop) {
  ServerThreads::instance().start(std::move(serve), std::move(stop));
}

}  // namespace braid::bootstrap
