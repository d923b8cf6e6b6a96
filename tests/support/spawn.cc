#include "support/spawn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace braid::testing {

ScopedEnv::ScopedEnv(const std::vector<std::pair<std::string, std::string>>& overrides) {
  for (const auto& [name, value] : overrides) {
    const char* previous = std::getenv(name.c_str());
    saved_.push_back({name, previous != nullptr, previous ? previous : ""});
    setenv(name.c_str(), value.c_str(), 1);
  }
}

ScopedEnv::~ScopedEnv() {
  // Restore in reverse so that a name set twice ends with its original value.
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    if (it->wasSet) {
      setenv(it->name.c_str(), it->value.c_str(), 1);
    } else {
      unsetenv(it->name.c_str());
    }
  }
}

void spawn(int nranks, const RankBody& body, const SpawnOptions& options) {
  ScopedEnv env(options.env);
  braidUniqueId id;
  braidResult_t idResult = braidGetUniqueId(&id);
  if (idResult != braidSuccess) {
    ADD_FAILURE() << "braidGetUniqueId failed: " << braidGetErrorString(idResult) << ": "
                  << braidGetLastError(nullptr);
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(nranks);
  for (int rank = 0; rank < nranks; ++rank) {
    threads.emplace_back([&, rank] {
      if (options.beforeInit) options.beforeInit(rank);
      braidComm_t comm = nullptr;
      braidResult_t result = braidCommInitRank(&comm, nranks, id, rank);
      if (result != braidSuccess) {
        ADD_FAILURE() << "rank " << rank
                      << ": braidCommInitRank failed: " << braidGetErrorString(result) << ": "
                      << braidGetLastError(nullptr);
        return;
      }
      body(comm, rank);
      result = braidCommDestroy(comm);
      EXPECT_EQ(result, braidSuccess)
          << "rank " << rank << ": braidCommDestroy: " << braidGetLastError(nullptr);
    });
  }
  for (auto& thread : threads) thread.join();
}

std::vector<braidComm_t> initRanks(int nranks, const SpawnOptions& options) {
  ScopedEnv env(options.env);
  braidUniqueId id;
  braidResult_t idResult = braidGetUniqueId(&id);
  if (idResult != braidSuccess) {
    ADD_FAILURE() << "braidGetUniqueId failed: " << braidGetLastError(nullptr);
    return {};
  }
  std::vector<braidComm_t> comms(nranks, nullptr);
  std::vector<braidResult_t> results(nranks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < nranks; ++rank) {
    threads.emplace_back([&, rank] {
      results[rank] = braidCommInitRank(&comms[rank], nranks, id, rank);
      if (results[rank] != braidSuccess) {
        ADD_FAILURE() << "rank " << rank
                      << ": braidCommInitRank failed: " << braidGetLastError(nullptr);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  bool allJoined = std::all_of(results.begin(), results.end(),
                               [](braidResult_t result) { return result == braidSuccess; });
  if (allJoined) return comms;
  for (braidComm_t comm : comms) braidCommDestroy(comm);  // NULL for the ranks that failed
  return {};
}

}  // namespace braid::testing
