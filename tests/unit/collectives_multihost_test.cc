// Multi-host communicators faked with BRAID_HOST_ID (one host name per rank),
// run through the public API over the socket transport: the hierarchical
// algorithms forced and chosen automatically, on equal, unequal and
// interleaved host layouts, checked by the sweep against its reference. Also
// the host identity itself: the list form, its errors, and host numbering.
// (Real network namespaces: tests/multihost, ctest label multihost.)
#include <gtest/gtest.h>

#include "comm/host_identity.h"
#include "support/sweep_runner.h"

namespace braid::testing {
namespace {

struct Layout {
  const char* name;
  const char* hostIds;  // BRAID_HOST_ID
  int nranks;
};

constexpr Layout kLayouts[] = {
    {"2x2", "a,a,b,b", 4},
    {"interleaved", "a,b,a,b", 4},
    {"uneven3", "a,b,b,c,c,c", 6},
    {"onePerHost", "a,b,c", 3},
};

using MultiHostParam = std::tuple<std::string, int>;  // algorithm ("" = auto), layout index

class MultiHostSweepTest : public ::testing::TestWithParam<MultiHostParam> {};

TEST_P(MultiHostSweepTest, MatchesReference) {
  const auto& [algorithm, index] = GetParam();
  const Layout& layout = kLayouts[index];
  SweepSpec spec;
  spec.collectives = {Collective::kAllReduce, Collective::kBroadcast, Collective::kReduce};
  // The automatic choice differs from one host's only for large all-reduces.
  if (algorithm.empty()) spec.collectives = {Collective::kAllReduce};
  spec.largeCount = 100003;  // above the hierarchical threshold (64 KiB), and quick over TCP
  SpawnOptions options = SpawnOptions::withTransport("socket").set("BRAID_HOST_ID", layout.hostIds);
  if (!algorithm.empty()) options.set("BRAID_ALGO", algorithm);
  runSweepOnThreads(layout.nranks, spec, options);
}

std::string paramName(const ::testing::TestParamInfo<MultiHostParam>& info) {
  const std::string& algorithm = std::get<0>(info.param);
  return (algorithm.empty() ? std::string("auto") : algorithm) + "_" +
         kLayouts[std::get<1>(info.param)].name;
}

INSTANTIATE_TEST_SUITE_P(Forced, MultiHostSweepTest,
                         ::testing::Combine(::testing::Values("hier"), ::testing::Values(1, 2, 3)),
                         paramName);
INSTANTIATE_TEST_SUITE_P(ForcedTree, MultiHostSweepTest,
                         ::testing::Combine(::testing::Values("hiertree"), ::testing::Values(2)),
                         paramName);
INSTANTIATE_TEST_SUITE_P(Auto, MultiHostSweepTest,
                         ::testing::Combine(::testing::Values(""), ::testing::Values(0)),
                         paramName);

TEST(HostIdentityTest, ListNamesTheHostOfEachRank) {
  ScopedEnv env("BRAID_HOST_ID", "x,y,x");
  Result<uint64_t> a = hostIdentity(0, 3), b = hostIdentity(1, 3), c = hostIdentity(2, 3);
  ASSERT_TRUE(a.isOk() && b.isOk() && c.isOk());
  EXPECT_EQ(*a, *c);
  EXPECT_NE(*a, *b);
}

TEST(HostIdentityTest, OneNameIsTheSameHostForEveryRank) {
  ScopedEnv env("BRAID_HOST_ID", "node7");
  Result<uint64_t> a = hostIdentity(0, 2), b = hostIdentity(1, 2);
  ASSERT_TRUE(a.isOk() && b.isOk());
  EXPECT_EQ(*a, *b);
}

TEST(HostIdentityTest, DetectedIdentityIsStable) {
  ScopedEnv env("BRAID_HOST_ID", "");
  Result<uint64_t> a = hostIdentity(0, 2), b = hostIdentity(1, 2);
  ASSERT_TRUE(a.isOk() && b.isOk());
  EXPECT_EQ(*a, *b);
}

TEST(HostIdentityTest, MalformedListIsAnErrorNamingTheVariable) {
  {
    ScopedEnv env("BRAID_HOST_ID", "a,b");
    Result<uint64_t> id = hostIdentity(0, 3);
    ASSERT_FALSE(id.isOk());
    EXPECT_NE(id.status().message().find("BRAID_HOST_ID=a,b"), std::string::npos);
    EXPECT_NE(id.status().message().find("3 ranks"), std::string::npos);
  }
  {
    ScopedEnv env("BRAID_HOST_ID", "a,,b");
    Result<uint64_t> id = hostIdentity(1, 3);
    ASSERT_FALSE(id.isOk());
    EXPECT_NE(id.status().message().find("rank 1"), std::string::npos);
  }
}

TEST(HostIdentityTest, HostsAreNumberedByLowestRank) {
  EXPECT_EQ(hostIndices({7, 3, 7, 9, 3}), (std::vector<int>{0, 1, 0, 2, 1}));
  EXPECT_EQ(hostIndices({5}), (std::vector<int>{0}));
}

}  // namespace
}  // namespace braid::testing
