// BRAID_ALGO / BRAID_PROTO: the per-collective, size-range syntax; errors that name the
// bad token; the environment path through Config; and buildSchedule honouring a spec.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "collectives/select.h"
#include "core/config.h"
#include "core/selection_spec.h"
#include "support/spawn.h"

namespace braid {
namespace {

Result<SelectionSpec> parse(const std::string& text) {
  return SelectionSpec::parse(text, "BRAID_ALGO", Config::collectiveNames());
}

TEST(SelectionSpecTest, PicksByCollectiveThenSize) {
  Result<SelectionSpec> spec = parse("allreduce:rd@0-16K,tree@-64K,ring;broadcast:tree;ring");
  ASSERT_TRUE(spec.isOk()) << spec.status().message();
  EXPECT_EQ(spec->pick("allreduce", 0), "rd");
  EXPECT_EQ(spec->pick("allreduce", 16 << 10), "rd");
  EXPECT_EQ(spec->pick("allreduce", (16 << 10) + 1), "tree");
  EXPECT_EQ(spec->pick("allreduce", 64 << 10), "tree");
  EXPECT_EQ(spec->pick("allreduce", (64 << 10) + 1), "ring");
  EXPECT_EQ(spec->pick("broadcast", 1 << 30), "tree");
  EXPECT_EQ(spec->pick("reduce", 1), "ring");  // the rule for every collective
}

TEST(SelectionSpecTest, UncoveredSizesSelectAutomatically) {
  Result<SelectionSpec> spec = parse("allreduce:rd@0-1K;gather:ring@1M-");
  ASSERT_TRUE(spec.isOk());
  EXPECT_EQ(spec->pick("allreduce", 2048), "");
  EXPECT_EQ(spec->pick("gather", 1024), "");
  EXPECT_EQ(spec->pick("gather", 1 << 20), "ring");
  EXPECT_EQ(spec->pick("scatter", 1), "");
  EXPECT_TRUE(parse("")->empty());
}

TEST(SelectionSpecTest, ErrorsNameTheBadToken) {
  struct Bad {
    const char* text;
    const char* token;
  };
  for (const Bad& bad :
       {Bad{"allredux:ring", "'allredux'"}, Bad{"ring@16K", "'ring@16K'"}, Bad{"ring@x-1K", "'x'"},
        Bad{"ring@1K-2Q", "'2Q'"}, Bad{"ring@2K-1K", "'2K-1K'"}, Bad{"ring,,tree", "''"},
        Bad{"Ring", "'Ring'"}, Bad{"ring;tree", "'tree'"},
        Bad{"allreduce:rd;allreduce:ring", "'allreduce:ring'"},
        Bad{"ring@99999999999999999999K-", "'99999999999999999999K'"}}) {
    Result<SelectionSpec> spec = parse(bad.text);
    ASSERT_FALSE(spec.isOk()) << bad.text;
    EXPECT_EQ(spec.status().code(), braidInvalidArgument);
    EXPECT_NE(spec.status().message().find(bad.token), std::string::npos)
        << spec.status().message();
    EXPECT_NE(spec.status().message().find("BRAID_ALGO"), std::string::npos);
  }
}

using testing::ScopedEnv;

TEST(SelectionSpecTest, ConfigReadsAndChecksBothVariables) {
  {
    ScopedEnv env(std::vector<std::pair<std::string, std::string>>{
        {"BRAID_ALGO", "allreduce:rd@0-16K,ring;broadcast:tree"},
        {"BRAID_PROTO", "ll@0-64K,simple"}});
    Result<Config> config = Config::fromEnv();
    ASSERT_TRUE(config.isOk()) << config.status().message();
    EXPECT_EQ(config->algorithm, "allreduce:rd@0-16K,ring;broadcast:tree");
    EXPECT_EQ(config->protocol, "ll@0-64K,simple");
  }
  {
    ScopedEnv proto("BRAID_PROTO", "allreduce:ll,fast");
    Result<Config> config = Config::fromEnv();
    ASSERT_FALSE(config.isOk());
    EXPECT_NE(config.status().message().find("'fast'"), std::string::npos);
  }
  {
    ScopedEnv algo("BRAID_ALGO", std::string(300, 'r').c_str());
    EXPECT_FALSE(Config::fromEnv().isOk());
  }
}

TEST(SelectionSpecTest, BuildScheduleFollowsTheSpec) {
  coll::CollArgs args;
  args.kind = coll::CollKind::kAllReduce;
  args.nranks = 4;
  args.type = braidFloat32;
  const std::string spec = "allreduce:tree@0-1K,ring;broadcast:ring";
  args.count = 16;  // 64 B
  EXPECT_EQ(coll::buildSchedule(args, spec)->algorithm, "tree");
  args.count = 1024;  // 4 KiB
  EXPECT_EQ(coll::buildSchedule(args, spec)->algorithm, "ring");
  args.kind = coll::CollKind::kBroadcast;
  args.count = 16;
  EXPECT_EQ(coll::buildSchedule(args, spec)->algorithm, "ring");
  args.kind = coll::CollKind::kGather;  // no rule: automatic
  EXPECT_EQ(coll::buildSchedule(args, spec)->algorithm, coll::defaultAlgorithm(args).name);
  Result<coll::Schedule> typo = coll::buildSchedule(args, "gather:drect");
  ASSERT_FALSE(typo.isOk());
  EXPECT_NE(typo.status().message().find("'drect'"), std::string::npos);
}

// A communicator honours a per-collective spec end to end: the sums come out right
// whichever algorithm each size gets.
TEST(SelectionSpecTest, CommunicatorRunsWithASpec) {
  testing::SpawnOptions options = testing::SpawnOptions::withTransport("shm");
  options.set("BRAID_ALGO", "allreduce:tree@0-64,ring;broadcast:ring");
  options.set("BRAID_PROTO", "simple");
  testing::spawn(
      3,
      [](braidComm_t comm, int rank) {
        for (size_t count : {size_t(4), size_t(4096)}) {
          std::vector<float> data(count, static_cast<float>(rank + 1));
          EXPECT_EQ(braidAllReduce(data.data(), data.data(), count, braidFloat32, braidSum, comm,
                                   nullptr),
                    braidSuccess);
          EXPECT_EQ(data.front(), 6.0f);
          EXPECT_EQ(data.back(), 6.0f);
        }
      },
      options);
}

// An algorithm name no algorithm has fails communicator creation on every rank.
TEST(SelectionSpecTest, UnknownAlgorithmFailsInitOnEveryRank) {
  testing::ScopedEnv env(std::vector<std::pair<std::string, std::string>>{
      {"BRAID_ALGO", "allreduce:rd,bogus"}, {"BRAID_TIMEOUT", "60"}});
  braidUniqueId id;
  ASSERT_EQ(braidGetUniqueId(&id), braidSuccess);
  std::vector<braidResult_t> results(2, braidSuccess);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      braidComm_t comm = nullptr;
      results[rank] = braidCommInitRank(&comm, 2, id, rank);
      if (results[rank] == braidSuccess) braidCommDestroy(comm);
    });
  }
  for (std::thread& t : ranks) t.join();
  EXPECT_EQ(results[0], braidInvalidArgument);
  EXPECT_EQ(results[1], braidInvalidArgument);
}

}  // namespace
}  // namespace braid
