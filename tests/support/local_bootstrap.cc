#include "support/local_bootstrap.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include "bootstrap/crypto.h"

namespace braid::testing {
namespace {

class LocalBootstrap : public transport::Bootstrap {
 public:
  LocalBootstrap(LocalBootstrapGroup* group, int rank) : group_(group), rank_(rank) {}
  int rank() const override { return rank_; }
  int nranks() const override { return group_->nranks(); }
  const std::string& commTag() const override { return group_->tag(); }
  const uint8_t* secret() const override { return group_->secret(); }
  std::array<uint8_t, 32> deriveKey(std::string_view purpose) const override {
    std::array<uint8_t, 32> key;
    bootstrap::hkdfSha256(bootstrap::ConstBytes(group_->secret(), 16), {}, purpose, key);
    return key;
  }
  Status allGather(void* data, size_t bytes) override {
    return group_->allGather(rank_, data, bytes);
  }
  Status barrier() override {
    std::vector<uint8_t> all(nranks());
    return group_->allGather(rank_, all.data(), 1);
  }
  double timeoutSeconds() const override { return group_->timeoutSeconds(); }

 private:
  LocalBootstrapGroup* const group_;  // owned by the test; outlives every rank's bootstrap
  const int rank_;
};

}  // namespace

LocalBootstrapGroup::LocalBootstrapGroup(int nranks, double timeoutSeconds)
    : nranks_(nranks), timeoutSeconds_(timeoutSeconds) {
  static std::atomic<int> counter{0};
  std::random_device rd;
  for (auto& b : secret_) b = static_cast<uint8_t>(rd());
  char buf[64];
  snprintf(buf, sizeof(buf), "t%x%x%x", static_cast<unsigned>(getpid()), rd() & 0xffff,
           counter.fetch_add(1));
  tag_ = buf;
}

std::unique_ptr<transport::Bootstrap> LocalBootstrapGroup::forRank(int rank) {
  return std::make_unique<LocalBootstrap>(this, rank);
}

Status LocalBootstrapGroup::allGather(int rank, void* data, size_t bytes) {
  std::unique_lock<std::mutex> lock(mu_);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(timeoutSeconds_));
  // Wait until the previous round has fully drained.
  if (!cv_.wait_until(lock, deadline, [&] { return departed_ == 0; })) {
    return timeoutError("local bootstrap: previous allGather did not drain");
  }
  if (arrived_ == 0) buffer_.assign(bytes * nranks_, 0);
  std::memcpy(buffer_.data() + rank * bytes, static_cast<uint8_t*>(data) + rank * bytes, bytes);
  uint64_t gen = generation_;
  if (++arrived_ == nranks_) {
    ++generation_;
    cv_.notify_all();
  } else if (!cv_.wait_until(lock, deadline, [&] { return generation_ != gen; })) {
    return timeoutError("local bootstrap: allGather timed out");
  }
  std::memcpy(data, buffer_.data(), bytes * nranks_);
  if (++departed_ == nranks_) {
    arrived_ = 0;
    departed_ = 0;
    cv_.notify_all();
  }
  return Status::ok();
}

void runOnRankThreads(LocalBootstrapGroup& group, const RankThreadBody& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < group.nranks(); ++r) {
    threads.emplace_back([&group, &body, r] {
      std::unique_ptr<transport::Bootstrap> bootstrap = group.forRank(r);
      body(r, *bootstrap);
    });
  }
  for (auto& t : threads) t.join();
}

std::vector<Status> statusesOnRankThreads(
    LocalBootstrapGroup& group, const std::function<Status(int rank, transport::Bootstrap&)>& fn) {
  std::vector<Status> statuses(group.nranks());
  runOnRankThreads(group, [&](int r, transport::Bootstrap& b) { statuses[r] = fn(r, b); });
  return statuses;
}

void expectAllOk(const std::vector<Status>& statuses) {
  for (size_t r = 0; r < statuses.size(); ++r) {
    EXPECT_TRUE(statuses[r].isOk()) << "rank " << r << ": " << statuses[r].message();
  }
}

}  // namespace braid::testing
