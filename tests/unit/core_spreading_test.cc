// BRAID_BIND=spread (comm/core_spreading.h): which CPU a rank process takes,
// when it leaves the affinity alone, and the error for a bad value. Each case
// runs in a forked child, so pinning never touches the test process itself.
#include "comm/core_spreading.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

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

std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

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

TEST(CoreSpreadingTest, LeavesAffinityAloneUnlessAskedAndOversubscribed) {
  const std::vector<int> cpus = allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  struct Case {
    const char* bind;  // nullptr: unset
    int localRanks;
  };
  for (Case c : {Case{nullptr, 4}, Case{"none", 4}, Case{"", 4}, Case{"spread", 2}}) {
    EXPECT_TRUE(inChild([&] {
      if (!restrictTo(cpus, 2)) return false;
      if (c.bind == nullptr ? unsetenv("BRAID_BIND") != 0 : setenv("BRAID_BIND", c.bind, 1) != 0) {
        return false;
      }
      int cpu = -2;
      if (!spreadOverCores(1, c.localRanks, &cpu).isOk()) return false;
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

}  // namespace
}  // namespace braid
