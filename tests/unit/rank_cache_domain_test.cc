// BRAID_L3_DOMAIN and BRAID_NUMA_NODE (src/comm/rank_cache_domain.h): one number for the
// process, or one per rank; anything else is an error that names the variable. Without
// them, a pinned rank is in its CPU's domain and node.
#include "comm/rank_cache_domain.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "topology/cache_domain.h"

namespace braid {
namespace {

class RankCacheDomainTest : public ::testing::Test {
 protected:
  void TearDown() override {
    ::unsetenv("BRAID_L3_DOMAIN");
    ::unsetenv("BRAID_NUMA_NODE");
  }
  static Result<int> with(const char* value, int rank, int nranks) {
    ::setenv("BRAID_L3_DOMAIN", value, 1);
    return rankCacheDomain(rank, nranks, -1);
  }
};

TEST_F(RankCacheDomainTest, ForcedForTheProcessOrPerRank) {
  EXPECT_EQ(*with("3", 2, 4), 3);
  EXPECT_EQ(*with("0,1,0,1", 1, 4), 1);
  EXPECT_EQ(*with("0,1,0,1", 2, 4), 0);
  EXPECT_EQ(*with("4095", 0, 1), 4095);
}

TEST_F(RankCacheDomainTest, BadValuesNameTheVariable) {
  for (const char* bad : {"x", "-1", "4096", "1.5", "0,,1,0", " 1", "0,1,0,1,"}) {
    Result<int> r = with(bad, 0, 4);
    ASSERT_FALSE(r.isOk()) << bad;
    EXPECT_EQ(r.status().code(), braidInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find("BRAID_L3_DOMAIN="), std::string::npos)
        << r.status().message();
  }
  Result<int> wrongLength = with("0,1,0", 0, 4);
  ASSERT_FALSE(wrongLength.isOk());
  EXPECT_NE(wrongLength.status().message().find("lists 3 domains"), std::string::npos)
      << wrongLength.status().message();
}

TEST_F(RankCacheDomainTest, APinnedRankIsInItsCpusDomain) {
  ::unsetenv("BRAID_L3_DOMAIN");
  const topo::CpuPlaces places = topo::cpuPlaces();
  ASSERT_FALSE(places.cpus.empty());
  for (const topo::CpuPlace& p : places.cpus) {
    Result<int> pinned = rankCacheDomain(0, 2, p.cpu);
    ASSERT_TRUE(pinned.isOk());
    EXPECT_EQ(*pinned, p.l3) << "CPU " << p.cpu;
  }
  EXPECT_EQ(*rankCacheDomain(0, 2, 1 << 20), -1) << "a CPU this machine does not have";
}

TEST_F(RankCacheDomainTest, NumaNodeForcedForTheProcessOrPerRank) {
  auto node = [](const char* value, int rank, int nranks) {
    ::setenv("BRAID_NUMA_NODE", value, 1);
    return rankNumaNode(rank, nranks, -1);
  };
  EXPECT_EQ(*node("1", 3, 4), 1);
  EXPECT_EQ(*node("0,9,0,9", 1, 4), 9);
  EXPECT_EQ(*node("0,9,0,9", 2, 4), 0);
  ::setenv("BRAID_L3_DOMAIN", "5", 1);  // one variable does not move the other
  EXPECT_EQ(*node("2", 0, 2), 2);
  EXPECT_EQ(*rankCacheDomain(0, 2, -1), 5);
  for (const char* bad : {"x", "-1", "4096", "0,1,", "0,1,2"}) {
    Result<int> r = node(bad, 0, 4);
    ASSERT_FALSE(r.isOk()) << bad;
    EXPECT_EQ(r.status().code(), braidInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find(std::string("BRAID_NUMA_NODE=") + bad), std::string::npos)
        << r.status().message();
    EXPECT_EQ(r.status().message().find("BRAID_L3_DOMAIN"), std::string::npos);
  }
  EXPECT_NE(node("0,1,2", 0, 4).status().message().find("lists 3 nodes"), std::string::npos);
}

TEST_F(RankCacheDomainTest, APinnedRankIsOnItsCpusNode) {
  const topo::CpuPlaces places = topo::cpuPlaces();
  ASSERT_FALSE(places.cpus.empty());
  for (const topo::CpuPlace& p : places.cpus) {
    Result<int> pinned = rankNumaNode(0, 2, p.cpu);
    ASSERT_TRUE(pinned.isOk());
    EXPECT_EQ(*pinned, p.numa) << "CPU " << p.cpu;
  }
  EXPECT_EQ(*rankNumaNode(0, 2, 1 << 20), -1) << "a CPU this machine does not have";
  // Unpinned: the one node the affinity mask lies in, if it lies in one.
  const topo::CacheDomains mine = topo::thisThreadDomains();
  EXPECT_EQ(*rankNumaNode(0, 2, -1), mine.numa.size() == 1 ? mine.numa[0] : -1);
}

}  // namespace
}  // namespace braid
