// BRAID_BIND (comm/core_spreading.h): which CPU a rank process takes, which
// calls run pinned under auto, spread and none, when the affinity is left
// alone, and the error for a bad value. Cases that pin run in a forked child,
// so pinning never touches the test process itself.
#include "comm/core_spreading.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "support/affinity.h"

namespace braid {
namespace {

// Runs `body` in a child process; true when it exited with status 0.
bool inChild(const std::function<bool()>& body) {
  pid_t pid = fork();
  if (pid == 0) _exit(body() ? 0 : 1);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

using testing::allowedCpus;

// Restricts the calling process to the first `n` of `cpus`.
bool restrictTo(const std::vector<int>& cpus, size_t n) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (size_t i = 0; i < n && i < cpus.size(); ++i) CPU_SET(cpus[i], &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

TEST(CoreSpreadingTest, OversubscribedRanksTakeCpusRoundRobin) {
  const std::vector<int> cpus = allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  // 5 ranks on 2 CPUs: local index i goes to the (i mod 2)-th allowed CPU.
  for (int index = 0; index < 5; ++index) {
    EXPECT_TRUE(inChild([&] {
      if (!restrictTo(cpus, 2) || setenv("BRAID_BIND", "spread", 1) != 0) return false;
      int cpu = -2;
      if (!spreadOverCores(index, 5, &cpu).isOk()) return false;
      const std::vector<int> now = allowedCpus();
      return cpu == cpus[index % 2] && now.size() == 1 && now[0] == cpu;
    })) << "local index "
        << index;
  }
}

TEST(CoreSpreadingTest, CreationPinsOnlyForSpreadWithRanksToSpread) {
  const std::vector<int> cpus = allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  struct Case {
    const char* bind;  // nullptr: unset
    int localRanks;
  };
  for (Case c : {Case{nullptr, 4}, Case{"none", 4}, Case{"", 4}, Case{"spread", 1}}) {
    EXPECT_TRUE(inChild([&] {
      if (!restrictTo(cpus, 2)) return false;
      if (c.bind == nullptr ? unsetenv("BRAID_BIND") != 0 : setenv("BRAID_BIND", c.bind, 1) != 0) {
        return false;
      }
      int cpu = -2;
      if (!spreadOverCores(c.localRanks - 1, c.localRanks, &cpu).isOk()) return false;
      return cpu == -1 && allowedCpus().size() == 2;
    })) << "BRAID_BIND="
        << (c.bind ? c.bind : "(unset)") << " ranks " << c.localRanks;
  }
}

TEST(CoreSpreadingTest, PinsOncePerProcess) {
  const std::vector<int> cpus = allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  EXPECT_TRUE(inChild([&] {
    if (!restrictTo(cpus, 2) || setenv("BRAID_BIND", "spread", 1) != 0) return false;
    int first = -2, second = -2;
    if (!spreadOverCores(1, 4, &first).isOk()) return false;
    if (!restrictTo(cpus, 2)) return false;  // as a later communicator would find it
    if (!spreadOverCores(0, 3, &second).isOk()) return false;
    return first == cpus[1] && second == -1 && allowedCpus().size() == 2;
  }));
}

TEST(CoreSpreadingTest, RejectsAnUnknownValue) {
  EXPECT_TRUE(inChild([] {
    if (setenv("BRAID_BIND", "everywhere", 1) != 0) return false;
    int cpu = -2;
    Status s = spreadOverCores(0, 64, &cpu);
    return !s.isOk() && s.message().find("BRAID_BIND='everywhere'") != std::string::npos &&
           cpu == -1;
  }));
}

// The decisions pinsNextCall makes for `calls` (bytes each), from a fresh count.
std::vector<bool> decisions(BindMode mode, const std::vector<size_t>& calls) {
  std::vector<bool> out;
  int smallRun = 0;
  for (size_t bytes : calls) {
    out.push_back(pinsNextCall(mode, bytes, kPinnedCallMaxBytes, &smallRun));
  }
  return out;
}

TEST(CoreSpreadingTest, AutoPinsAfterARunOfSmallCallsAndReleasesAtALargeOne) {
  const size_t small = kPinnedCallMaxBytes, large = kPinnedCallMaxBytes + 1;
  const int k = kSmallCallsBeforePinning;
  // k small calls (barriers count: 0 bytes), the k-th the first pinned; two
  // more stay pinned; a large call releases; the next k-1 small ones do not
  // pin again, the k-th does.
  std::vector<size_t> calls(k, 0);
  calls.back() = small;
  std::vector<bool> expected(k, false);
  expected.back() = true;
  for (size_t bytes : {size_t{8}, small}) {
    calls.push_back(bytes);
    expected.push_back(true);
  }
  calls.push_back(large);
  expected.push_back(false);
  for (int i = 0; i < k; ++i) {
    calls.push_back(8);
    expected.push_back(i == k - 1);
  }
  EXPECT_EQ(decisions(BindMode::kAuto, calls), expected);
  // A barrier before each large call (a benchmark's loop) never pins.
  std::vector<size_t> alternating;
  for (int i = 0; i < 4 * k; ++i) alternating.push_back(i % 2 ? size_t{128} << 20 : 0);
  EXPECT_EQ(decisions(BindMode::kAuto, alternating), std::vector<bool>(alternating.size(), false));
  EXPECT_EQ(decisions(BindMode::kSpread, calls), std::vector<bool>(calls.size(), true));
  EXPECT_EQ(decisions(BindMode::kNone, calls), std::vector<bool>(calls.size(), false));
}

TEST(CoreSpreadingTest, SpreadCpuGoesRoundRobinWhenRanksFillTheCpus) {
  const int cpus[] = {3, 5, 9};
  // 7 ranks on 3 CPUs: index i takes the (i mod 3)-th CPU of the list.
  const int expected[] = {3, 5, 9, 3, 5, 9, 3};
  for (int index = 0; index < 7; ++index) {
    EXPECT_EQ(spreadCpu(cpus, 3, index, 7), expected[index]) << "local index " << index;
  }
  EXPECT_EQ(spreadCpu(cpus, 3, 2, 3), 9);   // ranks fill the CPUs: one each
  EXPECT_EQ(spreadCpu(cpus, 3, 1, 2), -1);  // fewer ranks than CPUs: left alone
  EXPECT_EQ(spreadCpu(cpus, 1, 0, 1), -1);  // a single rank
  EXPECT_EQ(spreadCpu(cpus, 3, 7, 7), -1);  // index out of range
  EXPECT_EQ(spreadCpu(cpus, 3, -1, 7), -1);
  EXPECT_EQ(spreadCpu(cpus, 0, 0, 7), -1);  // no CPU allowed
}

TEST(CoreSpreadingTest, ReadsBindModes) {
  EXPECT_TRUE(inChild([] {
    struct Case {
      const char* value;  // nullptr: unset
      BindMode mode;
    };
    for (Case c :
         {Case{nullptr, BindMode::kAuto}, Case{"", BindMode::kAuto}, Case{"auto", BindMode::kAuto},
          Case{"spread", BindMode::kSpread}, Case{"none", BindMode::kNone}}) {
      if (c.value == nullptr ? unsetenv("BRAID_BIND") != 0
                             : setenv("BRAID_BIND", c.value, 1) != 0) {
        return false;
      }
      // Start from another mode, so a read that sets nothing fails.
      BindMode mode = c.mode == BindMode::kNone ? BindMode::kAuto : BindMode::kNone;
      if (!readBindMode(&mode).isOk() || mode != c.mode) return false;
    }
    if (setenv("BRAID_BIND", "Spread", 1) != 0) return false;
    BindMode mode = BindMode::kAuto;
    Status s = readBindMode(&mode);
    return !s.isOk() && s.message().find("BRAID_BIND='Spread'") != std::string::npos;
  }));
}

// The placement a thread has after placeForCall(bytes) for each of `calls`:
// the single CPU it is pinned to, or -1 when it has both of the two CPUs it
// was given before the communicator's decision (on a larger machine: not
// every CPU, so this also checks that a release restores the found mask).
std::vector<int> placementsAfter(const char* bind, int localIndex, int localRanks,
                                 const std::vector<size_t>& calls,
                                 std::vector<bool>* ownCore = nullptr) {
  std::vector<int> out;
  const std::vector<int> cpus = allowedCpus();
  if (!restrictTo(cpus, 2)) return out;
  if (bind == nullptr ? unsetenv("BRAID_BIND") != 0 : setenv("BRAID_BIND", bind, 1) != 0) {
    return out;
  }
  int cpu = -2;
  if (!spreadOverCores(localIndex, localRanks, &cpu).isOk()) return out;
  for (size_t bytes : calls) {
    placeForCall(bytes);
    const std::vector<int> now = allowedCpus();
    out.push_back(now.size() == 1 ? now[0] : now.size() == 2 ? -1 : -2);
    if (ownCore != nullptr) ownCore->push_back(pinnedToOwnCore());
  }
  return out;
}

TEST(CoreSpreadingTest, AutoPinsSmallCallsAndReleasesLargeOnes) {
  const std::vector<int> cpus = allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  const size_t big = size_t{1} << 20;
  // Local index 1 of 4 on 2 CPUs: the second CPU, once small calls ran in a row.
  const int c = cpus[1];
  const int k = kSmallCallsBeforePinning;
  std::vector<size_t> calls(k + 1, 8);
  std::vector<int> expected(k - 1, -1);
  expected.insert(expected.end(), {c, c});
  calls.insert(calls.end(), {big, 0});
  expected.insert(expected.end(), {-1, -1});
  EXPECT_TRUE(inChild([&] { return placementsAfter(nullptr, 1, 4, calls) == expected; }))
      << "BRAID_BIND unset";
  EXPECT_TRUE(inChild([&] {
    return placementsAfter("spread", 1, 4, calls) == std::vector<int>(calls.size(), c);
  })) << "BRAID_BIND=spread";
  EXPECT_TRUE(inChild([&] {
    return placementsAfter("none", 1, 4, calls) == std::vector<int>(calls.size(), -1);
  })) << "BRAID_BIND=none";
  EXPECT_TRUE(inChild([&] {
    return placementsAfter("auto", 0, 1, calls) == std::vector<int>(calls.size(), -1);
  })) << "a single rank";
}

TEST(CoreSpreadingTest, OwnCoreOnlyWhileRanksDoNotOutnumberTheCpus) {
  const std::vector<int> cpus = allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  const int k = kSmallCallsBeforePinning;
  const size_t mid = size_t{1} << 20, large = 2 * kOwnCorePinnedCallMaxBytes;
  static_assert(mid > kPinnedCallMaxBytes && mid <= kOwnCorePinnedCallMaxBytes);
  std::vector<size_t> calls(k, 8);
  calls.insert(calls.end(), {mid, large});
  const int c = cpus[1];
  // 2 ranks on 2 CPUs fill them: pinned like 4 would be, then alone on the
  // CPU, and pinned for calls up to kOwnCorePinnedCallMaxBytes.
  std::vector<int> placed(k - 1, -1);
  placed.insert(placed.end(), {c, c, -1});
  std::vector<bool> alone(k - 1, false);
  alone.insert(alone.end(), {true, true, false});
  EXPECT_TRUE(inChild([&] {
    std::vector<bool> own;
    return placementsAfter(nullptr, 1, 2, calls, &own) == placed && own == alone;
  })) << "2 ranks on 2 CPUs";
  // 3 ranks on 2 CPUs: pinned for small calls only, sharing a CPU.
  std::vector<int> shared(k - 1, -1);
  shared.insert(shared.end(), {c, -1, -1});
  EXPECT_TRUE(inChild([&] {
    std::vector<bool> own;
    return placementsAfter(nullptr, 1, 3, calls, &own) == shared &&
           own == std::vector<bool>(calls.size(), false);
  })) << "3 ranks on 2 CPUs";
  EXPECT_TRUE(inChild([&] {
    std::vector<bool> own;
    return placementsAfter("none", 1, 2, calls, &own) == std::vector<int>(calls.size(), -1) &&
           own == std::vector<bool>(calls.size(), false);
  })) << "BRAID_BIND=none";
}

TEST(CoreSpreadingTest, UsableCpusCountTheAffinityFoundBeforePinning) {
  const std::vector<int> cpus = allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  EXPECT_TRUE(inChild([&] {
    if (!restrictTo(cpus, 2) || unsetenv("BRAID_BIND") != 0) return false;
    auto usableCount = [] {
      const cpu_set_t usable = usableCpus();
      return CPU_COUNT(&usable);
    };
    int cpu = -2;
    if (usableCount() != 2 || !spreadOverCores(0, 4, &cpu).isOk()) return false;
    for (int i = 0; i < kSmallCallsBeforePinning; ++i) placeForCall(8);
    // Pinned to one CPU now; a later communicator must still see the two.
    return allowedCpus().size() == 1 && usableCount() == 2;
  }));
}

// A thread's own affinity is its own: a large call never rewrites it with the
// mask the communicator found, and a release gives back the mask this thread
// had before braid pinned it.
TEST(CoreSpreadingTest, ReleaseRestoresTheThreadsOwnMask) {
  const std::vector<int> cpus = allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  EXPECT_TRUE(inChild([&] {
    if (!restrictTo(cpus, 2) || unsetenv("BRAID_BIND") != 0) return false;
    int cpu = -2;
    if (!spreadOverCores(1, 4, &cpu).isOk()) return false;  // decided on both CPUs
    // The application narrows this thread to the first CPU after the decision.
    if (!restrictTo(cpus, 1)) return false;
    placeForCall(size_t{1} << 30);  // a large call before any pin: left alone
    if (allowedCpus() != std::vector<int>{cpus[0]}) return false;
    for (int i = 0; i < kSmallCallsBeforePinning; ++i) placeForCall(8);
    if (allowedCpus() != std::vector<int>{cpus[1]}) return false;  // pinned
    placeForCall(size_t{1} << 30);
    return allowedCpus() == std::vector<int>{cpus[0]};  // its own mask, not both CPUs
  }));
}

}  // namespace
}  // namespace braid
