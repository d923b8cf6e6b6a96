// An in-process Bootstrap for tests: N ranks on N threads share one
// LocalBootstrapGroup, so transports can be tested without sockets or a
// communicator.
#pragma once

#include <condition_variable>
#include <cstdint>
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

}  // namespace braid::testing
