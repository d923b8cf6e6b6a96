// spawn(): runs one test body on N ranks of a fresh communicator, one thread per rank.
//
// The calling thread creates the unique id, starts one std::thread per rank,
// and each thread joins with braidCommInitRank, runs the body, and destroys its
// communicator. Failures inside a rank are reported with gtest's ADD_FAILURE /
// EXPECT_* (thread-safe) and prefixed with the rank; never ASSERT_* inside a
// body that other ranks wait on, since an early return leaves them waiting
// until BRAID_TIMEOUT.
//
// Environment overrides (BRAID_TRANSPORT, BRAID_ALGO, BRAID_TIMEOUT, ...) are
// process-wide: spawn() sets them before the threads start and restores the
// previous values after they join, so spawn() itself must not run concurrently.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "braid.h"

namespace braid::testing {

struct SpawnOptions {
  /// (name, value) pairs set for the duration of spawn().
  std::vector<std::pair<std::string, std::string>> env;

  /// Convenience: BRAID_TRANSPORT and BRAID_TIMEOUT (seconds), the common case.
  static SpawnOptions withTransport(const std::string& transport, int timeoutSeconds = 60) {
    SpawnOptions options;
    options.env = {{"BRAID_TRANSPORT", transport},
                   {"BRAID_TIMEOUT", std::to_string(timeoutSeconds)}};
    return options;
  }
  SpawnOptions& set(const std::string& name, const std::string& value) {
    env.emplace_back(name, value);
    return *this;
  }

  /// Runs on each rank's thread just before braidCommInitRank (e.g. to set its affinity).
  std::function<void(int rank)> beforeInit;
};

using RankBody = std::function<void(braidComm_t comm, int rank)>;

/// Runs `body` on ranks 0..nranks-1 of a new communicator and returns when all
/// have finished. A rank whose braidCommInitRank fails reports it and skips the body.
void spawn(int nranks, const RankBody& body, const SpawnOptions& options = {});

/// Creates a communicator of `nranks` (one thread per rank for the
/// collective init) and returns the handles, in rank order, for tests that
/// must control their lifetime (abort, finalize). Empty, after ADD_FAILURE,
/// when any rank failed. The caller destroys (or aborts) every handle.
std::vector<braidComm_t> initRanks(int nranks, const SpawnOptions& options = {});

/// Sets environment variables for the lifetime of the object, then restores them.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::vector<std::pair<std::string, std::string>>& overrides);
  ScopedEnv(const std::string& name, const std::string& value) : ScopedEnv({{name, value}}) {}
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  struct Saved {
    std::string name;
    bool wasSet;
    std::string value;
  };
  std::vector<Saved> saved_;
};

}  // namespace braid::testing
