// How a host's ranks share its CPUs (comm/cpu_share.h): the union of their
// affinity masks and whether a launcher bound them apart, computed from masks,
// and what live communicators (threads, each with its own affinity) make of
// it: the spin before a waiter yields and Config::hostCpus for the shm
// transport's block rule.
#include "comm/cpu_share.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <initializer_list>
#include <vector>

#include "api/guard.h"
#include "comm/comm.h"
#include "support/affinity.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

cpu_set_t maskOf(std::initializer_list<int> cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  return set;
}

TEST(CpuShare, RanksBoundACoreEachAreApart) {
  // mpirun -np 2 (OpenMPI binds each rank to a core), srun --cpu-bind=cores.
  const CpuShare share = shareCpus({maskOf({0}), maskOf({1})});
  EXPECT_EQ(share.localRanks, 2);
  EXPECT_EQ(share.cpus, 2);
  EXPECT_TRUE(share.apart);
  EXPECT_FALSE(share.oversubscribed());
}

TEST(CpuShare, RanksSharingTheirCpusAreNotApart) {
  const CpuShare share = shareCpus({maskOf({0, 1}), maskOf({0, 1})});
  EXPECT_EQ(share.cpus, 2);
  EXPECT_FALSE(share.apart);
  EXPECT_FALSE(share.oversubscribed());
  // Overlapping masks count each CPU once.
  const CpuShare overlap = shareCpus({maskOf({0, 1}), maskOf({1, 2}), maskOf({5})});
  EXPECT_EQ(overlap.cpus, 4);
  EXPECT_FALSE(overlap.apart);
}

TEST(CpuShare, MoreRanksThanTheirCpusAreOversubscribed) {
  // Four ranks on two cores, bound or not, and four ranks under `taskset -c 0`.
  EXPECT_TRUE(shareCpus({maskOf({0}), maskOf({1}), maskOf({0}), maskOf({1})}).oversubscribed());
  EXPECT_TRUE(shareCpus(std::vector<cpu_set_t>(4, maskOf({0, 1}))).oversubscribed());
  const CpuShare crowded = shareCpus(std::vector<cpu_set_t>(4, maskOf({0})));
  EXPECT_EQ(crowded.cpus, 1);
  EXPECT_TRUE(crowded.oversubscribed());
  EXPECT_FALSE(crowded.apart);
}

TEST(CpuShare, UnknownMasksAndSingleRanks) {
  // A rank alone on its host is not "apart" (nothing to be apart from).
  const CpuShare alone = shareCpus({maskOf({3})});
  EXPECT_EQ(alone.localRanks, 1);
  EXPECT_FALSE(alone.apart);
  // An empty mask (the kernel would not say) never makes ranks apart; counts stay >= 1.
  const CpuShare unknown = shareCpus({maskOf({}), maskOf({1})});
  EXPECT_FALSE(unknown.apart);
  EXPECT_EQ(unknown.cpus, 1);
  EXPECT_EQ(shareCpus({}).cpus, 1);
  EXPECT_EQ(shareCpus({}).localRanks, 1);
}

struct Resolved {
  int spin = -2;
  int hostCpus = -2;
};

// Two shm ranks (threads) whose threads run on `cpusOf(rank)` when they join.
std::vector<Resolved> resolvedWith(const std::function<cpu_set_t(int)>& cpusOf) {
  std::vector<Resolved> out(2);
  SpawnOptions options = SpawnOptions::withTransport("shm").set("BRAID_SPIN", "");
  options.beforeInit = [&](int rank) {
    const cpu_set_t set = cpusOf(rank);
    EXPECT_EQ(sched_setaffinity(0, sizeof(set), &set), 0) << "rank " << rank;
  };
  spawn(
      2,
      [&](braidComm_t handle, int rank) {
        const Config& config = api::toComm(handle)->config();
        out[rank] = {config.spinIterations, config.hostCpus};
      },
      options);
  return out;
}

TEST(CpuShare, CommunicatorsReadTheHostsShareNotTheirOwnMask) {
  const std::vector<int> cpus = allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  const int a = cpus[0], b = cpus[1];
  // Bound apart, one CPU each: cores of their own, so they spin long before yielding
  // (before, each took its one-CPU mask for two ranks crowded on one CPU and never spun).
  for (const Resolved& r : resolvedWith([&](int rank) { return maskOf({rank == 0 ? a : b}); })) {
    EXPECT_EQ(r.hostCpus, 2);
    EXPECT_EQ(r.spin, 100);
  }
  // Both on the same two CPUs: not crowded, not bound apart.
  for (const Resolved& r : resolvedWith([&](int) { return maskOf({a, b}); })) {
    EXPECT_EQ(r.hostCpus, 2);
    EXPECT_EQ(r.spin, 10);
  }
  // Both on one CPU: crowded, so a waiter yields at once.
  for (const Resolved& r : resolvedWith([&](int) { return maskOf({a}); })) {
    EXPECT_EQ(r.hostCpus, 1);
    EXPECT_EQ(r.spin, 0);
  }
}

}  // namespace
}  // namespace braid::testing
