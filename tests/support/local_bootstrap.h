// An in-process Bootstrap for tests: N ranks on N threads share one
// LocalBootstrapGroup, so transports can be tested without sockets or a
// communicator. runOnRankThreads starts those threads.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"

namespace braid::testing {

/// Shared state of one group of in-process ranks.
class LocalBootstrapGroup {
 public:
  explicit LocalBootstrapGroup(int nranks, double timeoutSeconds = 30);

  /// The Bootstrap for `rank`; the group must outlive it.
  std::unique_ptr<transport::Bootstrap> forRank(int rank);

  int nranks() const { return nranks_; }
  const std::string& tag() const { return tag_; }
  const uint8_t* secret() const { return secret_; }
  double timeoutSeconds() const { return timeoutSeconds_; }

  /// Rendezvous: rank's `bytes` are published, then every rank's are copied out.
  Status allGather(int rank, void* data, size_t bytes);

 private:
  const int nranks_;
  const double timeoutSeconds_;
  std::string tag_;
  uint8_t secret_[16];
  std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  uint64_t generation_ = 0;
  int arrived_ = 0;
  int departed_ = 0;
  std::vector<uint8_t> buffer_;
};

/// What one rank of runOnRankThreads runs, with its own Bootstrap of the group.
using RankThreadBody = std::function<void(int rank, transport::Bootstrap& bootstrap)>;

/// Runs body(rank, bootstrap) for every rank of `group`, each on a thread of its own, and
/// returns once all have finished.
void runOnRankThreads(LocalBootstrapGroup& group, const RankThreadBody& body);

/// The same for bodies that return a Status: every rank's, in rank order.
std::vector<Status> statusesOnRankThreads(
    LocalBootstrapGroup& group, const std::function<Status(int rank, transport::Bootstrap&)>& fn);

/// Expects every status to be ok, naming the rank of each that is not.
void expectAllOk(const std::vector<Status>& statuses);

}  // namespace braid::testing
