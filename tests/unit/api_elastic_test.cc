// Derived communicators with NCCL 2.32's options: braidCommSplitConfig and
// braidCommShrinkConfig (blocking and non-blocking configs, a NULL config inheriting the
// parent's, both shrink flags) and braidCommGrow with braidCommGetUniqueId (2 -> 3 and
// 2 -> 4 ranks, then an all-reduce on every rank against a reference), each with bad input
// that must fail with an error naming it, never hang.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/unique_id.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bool mentions(braidComm_t comm, const std::string& words) {
  return std::string(braidGetLastError(comm)).find(words) != std::string::npos;
}

// Polls braidCommGetAsyncError until it stops answering braidInProgress (bounded).
braidResult_t settle(braidComm_t comm, double seconds = 30) {
  braidResult_t state = braidInProgress;
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (state == braidInProgress && Clock::now() < deadline) {
    EXPECT_EQ(braidCommGetAsyncError(comm, &state), braidSuccess) << braidGetLastError(comm);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return state;
}

// Waits for a derived communicator: `result` is the call's answer.
void ready(braidResult_t result, braidComm_t comm, const char* what) {
  if (result == braidInProgress) result = settle(comm);
  EXPECT_EQ(result, braidSuccess) << what << ": " << braidGetLastError(comm)
                                  << braidGetLastError(nullptr);
}

// The value `rank` contributes at index i, and the sum over `nranks` ranks.
int64_t input(int rank, size_t i) { return rank * 100003 + static_cast<int64_t>(i) * 7 - 50; }
int64_t expectedSum(int nranks, size_t i) {
  int64_t sum = 0;
  for (int r = 0; r < nranks; ++r) sum += input(r, i);
  return sum;
}

// An all-reduce of `count` int64 on `comm` (this rank is `rank` of `nranks`) against the
// reference sum; false after reporting the first mismatch.
bool allReduceMatches(braidComm_t comm, int rank, int nranks, size_t count = 1031) {
  int size = 0, me = -1;
  EXPECT_EQ(braidCommCount(comm, &size), braidSuccess) << braidGetLastError(comm);
  EXPECT_EQ(braidCommUserRank(comm, &me), braidSuccess);
  EXPECT_EQ(size, nranks);
  EXPECT_EQ(me, rank);
  std::vector<int64_t> send(count), recv(count, -1);
  for (size_t i = 0; i < count; ++i) send[i] = input(rank, i);
  braidResult_t r =
      braidAllReduce(send.data(), recv.data(), count, braidInt64, braidSum, comm, nullptr);
  EXPECT_EQ(r, braidSuccess) << "rank " << rank << ": " << braidGetLastError(comm);
  if (r != braidSuccess) return false;
  for (size_t i = 0; i < count; ++i) {
    if (recv[i] != expectedSum(nranks, i)) {
      ADD_FAILURE() << "rank " << rank << " of " << nranks << ": [" << i << "] = " << recv[i]
                    << ", expected " << expectedSum(nranks, i);
      return false;
    }
  }
  return true;
}

braidConfig_t configWithBlocking(int blocking) {
  braidConfig_t config = BRAID_CONFIG_INITIALIZER;
  config.blocking = blocking;
  return config;
}

// ---- Split ------------------------------------------------------------------------------

TEST(ApiElastic, SplitConfigBlockingAndNonBlocking) {
  spawn(4, [](braidComm_t comm, int rank) {
    // Blocking: ready when the call returns; parity groups, keyed in reverse.
    braidConfig_t blocking = configWithBlocking(1);
    braidComm_t half = nullptr;
    EXPECT_EQ(braidCommSplitConfig(comm, rank % 2, -rank, &half, &blocking), braidSuccess)
        << braidGetLastError(comm);
    EXPECT_TRUE(allReduceMatches(half, 1 - rank / 2, 2));  // keys -rank: rank 2 or 3 first
    EXPECT_EQ(braidCommDestroy(half), braidSuccess);

    // Non-blocking: braidInProgress, finished through braidCommGetAsyncError.
    braidConfig_t nonBlocking = configWithBlocking(0);
    braidComm_t all = nullptr;
    EXPECT_EQ(braidCommSplitConfig(comm, 0, rank, &all, &nonBlocking), braidInProgress)
        << braidGetLastError(comm);
    ASSERT_NE(all, nullptr);
    EXPECT_EQ(settle(all), braidSuccess) << braidGetLastError(all);
    EXPECT_TRUE(allReduceMatches(all, rank, 4));
    EXPECT_EQ(braidCommDestroy(all), braidSuccess);

    // NULL config: the parent's (blocking) mode; BRAID_SPLIT_NOCOLOR gets no communicator.
    braidComm_t some = nullptr;
    EXPECT_EQ(braidCommSplitConfig(comm, rank < 3 ? 0 : BRAID_SPLIT_NOCOLOR, 0, &some, nullptr),
              braidSuccess)
        << braidGetLastError(comm);
    if (rank < 3) {
      EXPECT_TRUE(allReduceMatches(some, rank, 3));
    } else {
      EXPECT_EQ(some, nullptr);
    }
    EXPECT_EQ(braidCommDestroy(some), braidSuccess);

    // Bad configs fail before any rank waits on another.
    braidConfig_t junk;
    std::memset(&junk, 0, sizeof(junk));
    EXPECT_EQ(braidCommSplitConfig(comm, 0, 0, &some, &junk), braidInvalidArgument);
    EXPECT_TRUE(mentions(comm, "BRAID_CONFIG_INITIALIZER")) << braidGetLastError(comm);
    braidConfig_t odd = configWithBlocking(5);
    EXPECT_EQ(braidCommSplitConfig(comm, 0, 0, &some, &odd), braidInvalidArgument);
    EXPECT_TRUE(mentions(comm, "blocking 5")) << braidGetLastError(comm);
    EXPECT_EQ(braidCommSplitConfig(comm, 0, 0, nullptr, nullptr), braidInvalidArgument);
    EXPECT_TRUE(mentions(comm, "newcomm")) << braidGetLastError(comm);
    EXPECT_EQ(some, nullptr);
  });
}

// A communicator made non-blocking hands that mode to a split with a NULL config.
TEST(ApiElastic, NullConfigInheritsTheParentsNonBlockingMode) {
  ScopedEnv env("BRAID_TIMEOUT", "20");
  braidUniqueId id;
  ASSERT_EQ(braidGetUniqueId(&id), braidSuccess);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      braidConfig_t nonBlocking = configWithBlocking(0);
      braidComm_t parent = nullptr;
      const braidResult_t init = braidCommInitRankConfig(&parent, 2, id, rank, &nonBlocking);
      ready(init, parent, "init");
      braidComm_t child = nullptr;
      EXPECT_EQ(braidCommSplitConfig(parent, 0, rank, &child, nullptr), braidInProgress)
          << braidGetLastError(parent);
      EXPECT_EQ(settle(child), braidSuccess) << braidGetLastError(child);
      EXPECT_TRUE(allReduceMatches(child, rank, 2));
      // A config's unset fields take the defaults (blocking), not the parent's.
      braidConfig_t unset = BRAID_CONFIG_INITIALIZER;
      braidComm_t defaulted = nullptr;
      EXPECT_EQ(braidCommSplitConfig(parent, 0, rank, &defaulted, &unset), braidSuccess)
          << braidGetLastError(parent);
      EXPECT_TRUE(allReduceMatches(defaulted, rank, 2));
      EXPECT_EQ(braidCommDestroy(defaulted), braidSuccess);
      // The config-less call stays blocking whatever the parent's mode.
      braidComm_t blockingChild = nullptr;
      EXPECT_EQ(braidCommSplit(parent, 0, rank, &blockingChild), braidSuccess);
      EXPECT_TRUE(allReduceMatches(blockingChild, rank, 2));
      EXPECT_EQ(braidCommDestroy(blockingChild), braidSuccess);
      EXPECT_EQ(braidCommDestroy(child), braidSuccess);
      EXPECT_EQ(braidCommDestroy(parent), braidSuccess);
    });
  }
  for (auto& t : ranks) t.join();
}

// ---- Shrink -----------------------------------------------------------------------------

// BRAID_SHRINK_DEFAULT leaves a healthy parent usable; a non-blocking config gives a
// communicator finished through braidCommGetAsyncError.
TEST(ApiElastic, ShrinkConfigDefaultKeepsTheParent) {
  spawn(3, [](braidComm_t comm, int rank) {
    braidConfig_t nonBlocking = configWithBlocking(0);
    braidComm_t shrunk = nullptr;
    const int exclude[] = {1};
    braidResult_t r =
        braidCommShrinkConfig(comm, exclude, 1, &shrunk, &nonBlocking, BRAID_SHRINK_DEFAULT);
    if (rank == 1) {
      EXPECT_EQ(r, braidSuccess);
      EXPECT_EQ(shrunk, nullptr);
    } else {
      EXPECT_EQ(r, braidInProgress) << braidGetLastError(comm);
      EXPECT_EQ(settle(shrunk), braidSuccess) << braidGetLastError(shrunk);
      EXPECT_TRUE(allReduceMatches(shrunk, rank / 2, 2));
      EXPECT_EQ(braidCommDestroy(shrunk), braidSuccess);
    }
    EXPECT_TRUE(allReduceMatches(comm, rank, 3));  // the parent still works

    // Bad flags and configs are refused before anything is exchanged.
    EXPECT_EQ(braidCommShrinkConfig(comm, exclude, 1, &shrunk, nullptr, 7), braidInvalidArgument);
    EXPECT_TRUE(mentions(comm, "shrinkFlags 7")) << braidGetLastError(comm);
    braidConfig_t odd = configWithBlocking(-3);
    EXPECT_EQ(braidCommShrinkConfig(comm, exclude, 1, &shrunk, &odd, BRAID_SHRINK_ABORT),
              braidInvalidArgument);
    EXPECT_TRUE(mentions(comm, "blocking -3")) << braidGetLastError(comm);
    EXPECT_EQ(braidCommShrinkConfig(comm, nullptr, 1, &shrunk, nullptr, BRAID_SHRINK_DEFAULT),
              braidInvalidArgument);
    EXPECT_TRUE(mentions(comm, "excludeRanks")) << braidGetLastError(comm);
    EXPECT_TRUE(allReduceMatches(comm, rank, 3));  // and refusals left it healthy
  });
}

// Rank 2 hangs: ranks 0 and 1 are stuck in an all-reduce on the parent. BRAID_SHRINK_ABORT
// ends that call at once (long before BRAID_TIMEOUT), fails the parent, and gives the two
// a working communicator.
TEST(ApiElastic, ShrinkAbortEndsTheParentsWorkInFlight) {
  std::atomic<int> finished{0};
  spawn(
      3,
      [&](braidComm_t comm, int rank) {
        if (rank == 2) {  // the hung rank: never joins the all-reduce, nor leaves before the end
          const auto deadline = Clock::now() + std::chrono::seconds(40);
          while (finished.load() < 2 && Clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
          return;
        }
        braidResult_t stuckResult = braidSuccess;
        double stuckSeconds = 0;
        std::thread stuck([&] {
          const auto start = Clock::now();
          int64_t v = 1, s = 0;
          stuckResult = braidAllReduce(&v, &s, 1, braidInt64, braidSum, comm, nullptr);
          stuckSeconds = secondsSince(start);
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        const int exclude[] = {2};
        braidConfig_t blocking = configWithBlocking(1);
        braidComm_t shrunk = nullptr;
        const auto start = Clock::now();
        EXPECT_EQ(braidCommShrinkConfig(comm, exclude, 1, &shrunk, &blocking, BRAID_SHRINK_ABORT),
                  braidSuccess)
            << braidGetLastError(comm);
        stuck.join();
        EXPECT_NE(stuckResult, braidSuccess);
        EXPECT_LT(stuckSeconds, 15) << "the call in flight waited for BRAID_TIMEOUT";
        EXPECT_LT(secondsSince(start), 15);
        EXPECT_TRUE(allReduceMatches(shrunk, rank, 2));
        int64_t v = 1, s = 0;
        EXPECT_NE(braidAllReduce(&v, &s, 1, braidInt64, braidSum, comm, nullptr), braidSuccess)
            << "the aborted parent took new work";
        EXPECT_EQ(braidCommDestroy(shrunk), braidSuccess);
        finished.fetch_add(1);
      },
      SpawnOptions::withTransport("socket", 30));
}

// ---- Grow -------------------------------------------------------------------------------

// Grows a communicator of `from` ranks to `to`: rank 0 coordinates, new ranks join with its
// id; then every rank runs an all-reduce on the grown communicator against the reference,
// and the parent keeps working. `blocking` is every rank's config->blocking.
void growAndCheck(int from, int to, int blocking) {
  ScopedEnv env("BRAID_TIMEOUT", "20");
  std::vector<braidComm_t> parents = initRanks(from);
  ASSERT_EQ(static_cast<int>(parents.size()), from);
  braidUniqueId id;
  ASSERT_EQ(braidCommGetUniqueId(parents[0], &id), braidSuccess) << braidGetLastError(parents[0]);
  std::vector<braidComm_t> grown(to, nullptr);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < to; ++rank) {
    ranks.emplace_back([&, rank] {
      braidConfig_t config = configWithBlocking(blocking);
      braidResult_t r;
      if (rank < from) {
        r = braidCommGrow(parents[rank], to, rank == 0 ? &id : nullptr, -1, &grown[rank], &config);
      } else {
        r = braidCommGrow(nullptr, to, &id, rank, &grown[rank], &config);
      }
      EXPECT_EQ(r, blocking ? braidSuccess : braidInProgress)
          << "rank " << rank << ": " << braidGetLastError(rank < from ? parents[rank] : nullptr);
      ready(r, grown[rank], "grow");
      EXPECT_TRUE(allReduceMatches(grown[rank], rank, to));
      if (rank < from) {
        EXPECT_TRUE(allReduceMatches(parents[rank], rank, from));
      }
    });
  }
  for (auto& t : ranks) t.join();
  for (braidComm_t c : grown) EXPECT_EQ(braidCommDestroy(c), braidSuccess);
  for (braidComm_t c : parents) EXPECT_EQ(braidCommDestroy(c), braidSuccess);
}

TEST(ApiElastic, GrowTwoToThree) { growAndCheck(2, 3, 1); }
TEST(ApiElastic, GrowTwoToFourNonBlocking) { growAndCheck(2, 4, 0); }

// Arguments every rank can check: each call fails at once with an error naming the
// argument, and the existing ranks' exchange ends together even when only one refuses.
TEST(ApiElastic, GrowBadArguments) {
  ScopedEnv env("BRAID_TIMEOUT", "20");
  std::vector<braidComm_t> parents = initRanks(2);
  ASSERT_EQ(parents.size(), 2u);
  braidUniqueId id;
  ASSERT_EQ(braidCommGetUniqueId(parents[0], &id), braidSuccess);
  // One id at a time.
  braidUniqueId second;
  EXPECT_EQ(braidCommGetUniqueId(parents[0], &second), braidInvalidUsage);
  EXPECT_TRUE(mentions(parents[0], "not been used")) << braidGetLastError(parents[0]);
  EXPECT_EQ(braidCommGetUniqueId(parents[0], nullptr), braidInvalidArgument);

  // New ranks: checked against the id before anything connects.
  braidComm_t joined = nullptr;
  EXPECT_EQ(braidCommGrow(nullptr, 3, nullptr, 2, &joined, nullptr), braidInvalidArgument);
  EXPECT_TRUE(mentions(nullptr, "uniqueId")) << braidGetLastError(nullptr);
  EXPECT_EQ(braidCommGrow(nullptr, 3, &id, 1, &joined, nullptr), braidInvalidArgument);
  EXPECT_TRUE(mentions(nullptr, "rank 1 is not a new rank")) << braidGetLastError(nullptr);
  EXPECT_EQ(braidCommGrow(nullptr, 3, &id, 3, &joined, nullptr), braidInvalidArgument);
  EXPECT_TRUE(mentions(nullptr, "new ranks are 2..2")) << braidGetLastError(nullptr);
  EXPECT_EQ(braidCommGrow(nullptr, -4, &id, 2, &joined, nullptr), braidInvalidArgument);
  EXPECT_TRUE(mentions(nullptr, "nRanks -4")) << braidGetLastError(nullptr);
  EXPECT_EQ(braidCommGrow(nullptr, 1 << 30, &id, 2, &joined, nullptr), braidInvalidArgument);
  EXPECT_TRUE(mentions(nullptr, "nRanks 1073741824")) << braidGetLastError(nullptr);
  EXPECT_EQ(braidCommGrow(nullptr, 3, &id, 2, nullptr, nullptr), braidInvalidArgument);
  EXPECT_TRUE(mentions(nullptr, "newcomm")) << braidGetLastError(nullptr);
  braidUniqueId plain;
  ASSERT_EQ(braidGetUniqueId(&plain), braidSuccess);
  EXPECT_EQ(braidCommGrow(nullptr, 3, &plain, 2, &joined, nullptr), braidInvalidArgument);
  EXPECT_TRUE(mentions(nullptr, "braidCommGetUniqueId")) << braidGetLastError(nullptr);
  EXPECT_EQ(joined, nullptr);

  // Existing ranks: each case run by both, in threads; all must fail, none may hang.
  auto both = [&](auto call) {
    braidResult_t results[2];
    std::thread other([&] { results[1] = call(1); });
    results[0] = call(0);
    other.join();
    return std::vector<braidResult_t>{results[0], results[1]};
  };
  using Results = std::vector<braidResult_t>;
  const Results invalid = {braidInvalidArgument, braidInvalidArgument};
  braidComm_t out[2] = {};
  const auto start = Clock::now();
  // Not larger than the communicator, on every rank.
  EXPECT_EQ(both([&](int r) {
              return braidCommGrow(parents[r], 2, r == 0 ? &id : nullptr, -1, &out[r], nullptr);
            }),
            invalid);
  EXPECT_TRUE(mentions(parents[1], "nRanks 2 must be larger")) << braidGetLastError(parents[1]);
  // A negative size on rank 1 only: rank 0 learns of it from the exchange.
  EXPECT_EQ(both([&](int r) {
              return braidCommGrow(parents[r], r == 0 ? 3 : -1, r == 0 ? &id : nullptr, -1, &out[r],
                                   nullptr);
            }),
            invalid);
  EXPECT_TRUE(mentions(parents[1], "nRanks -1")) << braidGetLastError(parents[1]);
  EXPECT_TRUE(mentions(parents[0], "rank 1 refused")) << braidGetLastError(parents[0]);
  // Sizes that disagree.
  EXPECT_EQ(both([&](int r) {
              return braidCommGrow(parents[r], 3 + r, r == 0 ? &id : nullptr, -1, &out[r], nullptr);
            }),
            invalid);
  EXPECT_TRUE(mentions(parents[0], "disagree on nRanks")) << braidGetLastError(parents[0]);
  // A rank number on an existing rank.
  EXPECT_EQ(both([&](int r) {
              return braidCommGrow(parents[r], 3, r == 0 ? &id : nullptr, r == 1 ? 1 : -1, &out[r],
                                   nullptr);
            }),
            invalid);
  EXPECT_TRUE(mentions(parents[1], "must be -1")) << braidGetLastError(parents[1]);
  // Nobody passes the id; then rank 1 passes rank 0's (not its own) too.
  EXPECT_EQ(
      both([&](int r) { return braidCommGrow(parents[r], 3, nullptr, -1, &out[r], nullptr); }),
      invalid);
  EXPECT_TRUE(mentions(parents[0], "no rank passes a uniqueId")) << braidGetLastError(parents[0]);
  EXPECT_EQ(both([&](int r) { return braidCommGrow(parents[r], 3, &id, -1, &out[r], nullptr); }),
            invalid);
  EXPECT_TRUE(mentions(parents[1], "not this rank's unused id")) << braidGetLastError(parents[1]);
  EXPECT_LT(secondsSince(start), 10) << "a refusal waited for BRAID_TIMEOUT";
  EXPECT_EQ(out[0], nullptr);
  EXPECT_EQ(out[1], nullptr);
  // The parent is still healthy after all of it.
  std::thread other([&] { EXPECT_TRUE(allReduceMatches(parents[1], 1, 2)); });
  EXPECT_TRUE(allReduceMatches(parents[0], 0, 2));
  other.join();
  for (braidComm_t c : parents) EXPECT_EQ(braidCommDestroy(c), braidSuccess);
}

// The new rank never comes, or comes with a forged id: every rank ends within BRAID_TIMEOUT
// (and a little) with an error, and the existing ranks' names the missing rank.
TEST(ApiElastic, GrowWithAMissingOrForgedJoinerEndsWithinTheTimeout) {
  ScopedEnv env("BRAID_TIMEOUT", "2");
  for (bool forged : {false, true}) {
    SCOPED_TRACE(forged ? "forged id" : "no joiner");
    std::vector<braidComm_t> parents = initRanks(2);
    ASSERT_EQ(parents.size(), 2u);
    braidUniqueId id;
    ASSERT_EQ(braidCommGetUniqueId(parents[0], &id), braidSuccess);
    const auto start = Clock::now();
    braidResult_t results[3] = {braidSuccess, braidSuccess, braidSuccess};
    braidComm_t grown[3] = {};
    std::vector<std::thread> ranks;
    for (int r = 0; r < 2; ++r) {
      ranks.emplace_back([&, r] {
        results[r] = braidCommGrow(parents[r], 3, r == 0 ? &id : nullptr, -1, &grown[r], nullptr);
        if (results[r] != braidSuccess) {
          EXPECT_TRUE(mentions(parents[r], "rank 2 of 3 did not join"))
              << "rank " << r << ": " << braidGetLastError(parents[r]);
        }
      });
    }
    if (forged) {
      ranks.emplace_back([&] {
        braidUniqueId wrong = id;  // the right root, the wrong secret
        wrong.internal[offsetof(bootstrap::UniqueId, secret)] ^= 0x5a;
        results[2] = braidCommGrow(nullptr, 3, &wrong, 2, &grown[2], nullptr);
        EXPECT_TRUE(mentions(nullptr, "secret")) << braidGetLastError(nullptr);
      });
    }
    for (auto& t : ranks) t.join();
    for (int r = 0; r < (forged ? 3 : 2); ++r) {
      EXPECT_NE(results[r], braidSuccess) << "rank " << r;
      EXPECT_EQ(grown[r], nullptr);
    }
    EXPECT_LT(secondsSince(start), 12) << "the grow outlived BRAID_TIMEOUT";
    // The id was used: a fresh one can be made for the next attempt.
    braidUniqueId next;
    EXPECT_EQ(braidCommGetUniqueId(parents[0], &next), braidSuccess)
        << braidGetLastError(parents[0]);
    for (braidComm_t c : parents) EXPECT_EQ(braidCommDestroy(c), braidSuccess);
  }
}

}  // namespace
}  // namespace braid::testing
