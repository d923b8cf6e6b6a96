// braidrun's multi-host parts, without starting processes: host lists and
// hostfiles, rank placement, the launcher template and its quoting, the
// multi-host options and the environment a launched rank is given.
// braidrun_hosts_test.py runs multi-host jobs end to end.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "braidrun/host_list.h"
#include "braidrun/job_env.h"
#include "braidrun/launch_template.h"
#include "braidrun/options.h"
#include "parsed_options.h"  // this folder

namespace braid::run {
namespace {

std::vector<HostSlots> hostsOf(const std::string& text, std::string* error = nullptr) {
  std::vector<HostSlots> hosts;
  std::string ignored;
  if (!parseHostList(text, kMaxRanks, &hosts, error != nullptr ? error : &ignored)) return {};
  return hosts;
}

std::string describe(const std::vector<HostSlots>& hosts) { return describeHosts(hosts); }

TEST(BraidrunHostList, ParsesNamesAndCounts) {
  EXPECT_EQ(describe(hostsOf("a:4,b:4")), "a:4, b:4");
  EXPECT_EQ(describe(hostsOf("node-1.example.org,me@gpu_2:3")), "node-1.example.org:1, me@gpu_2:3");
  EXPECT_EQ(describe(hostsOf("10.0.0.1:2")), "10.0.0.1:2");
}

TEST(BraidrunHostList, RejectsBadEntriesNamingThem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "entry 1 is empty"},
      {"a,,b", "entry 2 is empty"},
      {"a:", "no rank count after ':'"},
      {"a:0", "whole number of ranks from 1 to 1024, got '0'"},
      {"a:x", "got 'x'"},
      {"a:1025", "got '1025'"},
      {"a:-1", "got '-1'"},
      {":4", "a host name is missing"},
      {"a b:2", "may hold only letters"},
      {"a;rm:2", "may hold only letters"},
      {"a:2,b,a:1", "host 'a' is listed twice"},
  };
  for (const auto& [text, want] : cases) {
    std::string error;
    EXPECT_TRUE(hostsOf(text, &error).empty()) << text;
    EXPECT_NE(error.find(want), std::string::npos) << text << ": " << error;
  }
}

TEST(BraidrunHostList, ReadsHostfilesAsMpirunWritesThem) {
  std::vector<HostSlots> hosts;
  std::string error;
  ASSERT_TRUE(
      parseHostFile("# cluster\na slots=4\n\nb:2   # two\n  c\n", "hf", kMaxRanks, &hosts, &error))
      << error;
  EXPECT_EQ(describe(hosts), "a:4, b:2, c:1");
  for (const auto& [text, want] :
       std::vector<std::pair<std::string, std::string>>{{"a\nb slots=x\n", "line 2"},
                                                        {"a slots=\n", "'slots=' needs a number"},
                                                        {"a b c\n", "line 1: expected"},
                                                        {"# nothing\n", "names no host"}}) {
    EXPECT_FALSE(parseHostFile(text, "hf", kMaxRanks, &hosts, &error)) << text;
    EXPECT_NE(error.find(want), std::string::npos) << error;
    EXPECT_NE(error.find("hostfile hf"), std::string::npos) << error;
  }
  EXPECT_FALSE(readHostFile("/nonexistent/braid-hosts", kMaxRanks, &hosts, &error));
  EXPECT_NE(error.find("cannot read hostfile"), std::string::npos) << error;
}

std::string placesOf(const std::string& hosts, MapBy mapBy) {
  std::string text;
  for (const RankPlace& p : placeRanks(hostsOf(hosts), mapBy)) {
    text += std::to_string(p.host) + "." + std::to_string(p.localRank) + "/" +
            std::to_string(p.localSize) + " ";
  }
  return text;
}

TEST(BraidrunHostList, PlacesRanksBySlotOrByNode) {
  EXPECT_EQ(placesOf("a:2,b:2", MapBy::kSlot), "0.0/2 0.1/2 1.0/2 1.1/2 ");
  EXPECT_EQ(placesOf("a:2,b:2", MapBy::kNode), "0.0/2 1.0/2 0.1/2 1.1/2 ");
  // Uneven hosts: round robin skips hosts that are full.
  EXPECT_EQ(placesOf("a:3,b:1,c:2", MapBy::kNode), "0.0/3 1.0/1 2.0/2 0.1/3 2.1/2 0.2/3 ");
  EXPECT_EQ(placesOf("a:3,b:1,c:2", MapBy::kSlot), "0.0/3 0.1/3 0.2/3 1.0/1 2.0/2 2.1/2 ");
}

TEST(BraidrunLaunchTemplate, SplitsLikeAShellAndNeedsHost) {
  LaunchTemplate t;
  std::string error;
  ASSERT_TRUE(parseLaunchTemplate("ip netns exec {host}", false, &t, &error)) << error;
  EXPECT_EQ(t.words, (std::vector<std::string>{"ip", "netns", "exec", "{host}"}));
  EXPECT_FALSE(t.remoteShell);
  ASSERT_TRUE(
      parseLaunchTemplate("/usr/bin/ssh -o 'Opt yes' \"-p 22\" x\\ y {host}", false, &t, &error))
      << error;
  EXPECT_EQ(t.words,
            (std::vector<std::string>{"/usr/bin/ssh", "-o", "Opt yes", "-p 22", "x y", "{host}"}));
  EXPECT_TRUE(t.remoteShell);
  ASSERT_TRUE(parseLaunchTemplate("my-wrapper {host}", true, &t, &error));
  EXPECT_TRUE(t.remoteShell);

  EXPECT_FALSE(parseLaunchTemplate("ssh", false, &t, &error));
  EXPECT_NE(error.find("does not contain {host}"), std::string::npos) << error;
  EXPECT_FALSE(parseLaunchTemplate("   ", false, &t, &error));
  EXPECT_NE(error.find("empty"), std::string::npos) << error;
  EXPECT_FALSE(parseLaunchTemplate("ssh '{host}", false, &t, &error));
  EXPECT_NE(error.find("unterminated quote"), std::string::npos) << error;
}

TEST(BraidrunLaunchTemplate, BuildsTheRankCommandQuotedForRemoteShells) {
  LaunchTemplate t;
  std::string error;
  const std::vector<std::string> env = {"A=1", "B=two words"};
  const std::vector<std::string> command = {"prog", "it's"};
  ASSERT_TRUE(parseLaunchTemplate("ip netns exec ns-{host}", false, &t, &error));
  EXPECT_EQ(launchArgv(t, "h1", env, command),
            (std::vector<std::string>{"ip", "netns", "exec", "ns-h1", "env", "A=1", "B=two words",
                                      "prog", "it's"}));
  ASSERT_TRUE(parseLaunchTemplate("ssh {host}", false, &t, &error));
  EXPECT_EQ(launchArgv(t, "me@b", env, command),
            (std::vector<std::string>{"ssh", "me@b", "env", "A=1", "'B=two words'", "prog",
                                      "'it'\\''s'"}));
  EXPECT_EQ(shellQuote("/a/b-c_d.e:1,2@x%+="), "/a/b-c_d.e:1,2@x%+=");
  EXPECT_EQ(shellQuote(""), "''");
  EXPECT_EQ(shellQuote("$HOME;`x`"), "'$HOME;`x`'");
}

TEST(BraidrunHostOptions, AcceptsMultiHostJobs) {
  Parsed p = parse({"--hosts", "a:4,b:4", "prog"});
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.options.nranks, 8);  // the hosts' sum when -n is absent
  EXPECT_EQ(p.options.launch.words, (std::vector<std::string>{"ssh", "{host}"}));
  p = parse({"-n", "3", "-Ha:2,b", "--map-by", "node", "--launcher=env X={host}", "--root-addr",
             "10.0.0.1", "--root-port", "29500", "--", "prog"});
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.options.mapBy, MapBy::kNode);
  EXPECT_EQ(p.options.rootAddress, "10.0.0.1");
  EXPECT_EQ(p.options.rootPort, 29500);
  EXPECT_EQ(p.options.launch.words, (std::vector<std::string>{"env", "X={host}"}));
  ::setenv("BRAIDRUN_HOSTS_TEST_VAR", "v a l", 1);
  p = parse({"-n", "1", "-x", "BRAIDRUN_HOSTS_TEST_VAR", "prog"});
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.options.extraEnv, std::vector<std::string>{"BRAIDRUN_HOSTS_TEST_VAR=v a l"});
  ::unsetenv("BRAIDRUN_HOSTS_TEST_VAR");
}

TEST(BraidrunHostOptions, RejectsInconsistentOnesClearly) {
  const std::vector<std::pair<std::vector<const char*>, std::string>> cases = {
      {{"-n", "8", "--hosts", "a:4,b:2", "prog"}, "add up to 6 ranks, but -n asks for 8"},
      {{"--hosts", "a:1000,b:100", "prog"}, "more than 1024"},
      {{"-n", "2", "--launcher", "ssh {host}", "prog"}, "--launcher needs --hosts"},
      {{"-n", "2", "--root-port", "1", "prog"}, "--root-port needs --hosts"},
      {{"--hosts", "a", "--hostfile", "f", "prog"}, "not both"},
      {{"--hosts", "a", "--launcher", "ssh", "prog"}, "does not contain {host}"},
      {{"--hosts", "a", "--root-port", "70000", "prog"}, "from 1 to 65535"},
      {{"--hosts", "a", "--map-by", "core", "prog"}, "'slot' or 'node'"},
      {{"--hosts", "a", "--launcher-quote=1", "prog"}, "takes no value"},
      {{"--hosts", "a;b:2", "prog"}, "may hold only letters"},
      {{"-n", "1", "-x", "BRAIDRUN_HOSTS_TEST_UNSET", "prog"}, "is not set"},
  };
  for (const auto& [args, want] : cases) {
    Parsed p = parse(args);
    EXPECT_FALSE(p.ok) << want;
    EXPECT_NE(p.error.find(want), std::string::npos) << p.error;
  }
}

std::string valueOf(const std::vector<std::string>& env, const std::string& name) {
  for (const std::string& entry : env) {
    if (entry.rfind(name + "=", 0) == 0) return entry.substr(name.size() + 1);
  }
  return "<unset>";
}

TEST(BraidrunHostEnv, LaunchedRanksGetBraidVariablesAndTheirHostNumbering) {
  ::setenv("BRAID_TIMEOUT", "17", 1);
  ::setenv("BRAID_ROOT_FD", "9", 1);     // stale, from an outer job
  ::setenv("BRAID_HOST_ID", "head", 1);  // this machine's, not the launched rank's
  ::setenv("BRAIDRUN_HOSTS_TEST_PRIVATE", "x", 1);
  RootPlan plan;
  plan.advertised = "hostA";
  plan.port = 29511;
  plan.listenHere = false;  // rank 0 runs elsewhere: nothing bound here
  JobIdentity job;
  std::string error;
  ASSERT_TRUE(makeJobIdentity(&job, plan, &error)) << error;
  EXPECT_EQ(job.rootPort, 29511);
  EXPECT_TRUE(job.rootListener == nullptr || !job.rootListener->valid());

  std::vector<std::string> env =
      launchedRankEnvironment(job, 0, 6, RankPlace{1, 2, 3}, {"EXTRA=1", "BRAID_TIMEOUT=5"});
  EXPECT_EQ(valueOf(env, "BRAID_ROOT"), "hostA:29511");
  EXPECT_EQ(valueOf(env, "MASTER_ADDR"), "hostA");
  EXPECT_EQ(valueOf(env, "BRAID_RANK"), "0");
  EXPECT_EQ(valueOf(env, "BRAID_LOCAL_RANK"), "2");
  EXPECT_EQ(valueOf(env, "LOCAL_WORLD_SIZE"), "3");
  EXPECT_EQ(valueOf(env, "GROUP_RANK"), "1");
  EXPECT_EQ(valueOf(env, "BRAID_TIMEOUT"), "5");  // -x has the last word
  EXPECT_EQ(valueOf(env, "EXTRA"), "1");
  EXPECT_EQ(valueOf(env, "BRAID_ROOT_FD"), "<unset>");
  EXPECT_EQ(valueOf(env, "BRAID_HOST_ID"), "<unset>");
  EXPECT_EQ(valueOf(env, "BRAIDRUN_HOSTS_TEST_PRIVATE"), "<unset>");  // not on the command line
  EXPECT_EQ(valueOf(launcherProcessEnvironment(), "BRAID_ROOT_FD"), "<unset>");
  EXPECT_EQ(valueOf(launcherProcessEnvironment(), "BRAIDRUN_HOSTS_TEST_PRIVATE"), "x");
  ::unsetenv("BRAID_TIMEOUT");
  ::unsetenv("BRAID_ROOT_FD");
  ::unsetenv("BRAID_HOST_ID");
  ::unsetenv("BRAIDRUN_HOSTS_TEST_PRIVATE");
}

}  // namespace
}  // namespace braid::run
