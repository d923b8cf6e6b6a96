// BRAID_L3_DOMAIN (src/comm/rank_cache_domain.h): one number for the process, or
// one per rank; anything else is an error that names the variable.
#include "comm/rank_cache_domain.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "topology/cache_domain.h"

namespace braid {
namespace {

class RankCacheDomainTest : public ::testing::Test {
 protected:
  void TearDown() override { ::unsetenv("BRAID_L3_DOMAIN"); }
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

}  // namespace
}  // namespace braid
