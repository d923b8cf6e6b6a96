#include "api/rank_threads.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace braid::api {
namespace {

std::atomic<int> failingStart{-1};

std::thread startThread(std::function<void()> fn) {
  if (failingStart.load() >= 0 && failingStart.fetch_sub(1) == 0) {
    throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                            "thread start refused (test)");
  }
  return std::thread(std::move(fn));
}

}  // namespace

void failThreadStartForTesting(int nth) { failingStart.store(nth); }

Status runOnRankThreads(int n, const std::function<void(int rank)>& body) {
  std::mutex mu;
  std::condition_variable opened;
  enum { kClosed, kGo, kStop } gate = kClosed;
  std::vector<std::thread> threads;
  threads.reserve(n);
  Status failed;
  for (int r = 0; r < n && failed.isOk(); ++r) {
    try {
      threads.push_back(startThread([&, r] {
        std::unique_lock<std::mutex> lock(mu);
        opened.wait(lock, [&] { return gate != kClosed; });
        const bool go = gate == kGo;
        lock.unlock();
        if (go) body(r);
      }));
    } catch (const std::system_error& e) {
      failed = Status(braidSystemError, "could not start the thread of rank " + std::to_string(r) +
                                            " of " + std::to_string(n) + " (" + e.what() +
                                            "); no rank was initialized");
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    gate = failed.isOk() ? kGo : kStop;
  }
  opened.notify_all();
  for (std::thread& t : threads) t.join();
  return failed;
}

}  // namespace braid::api
