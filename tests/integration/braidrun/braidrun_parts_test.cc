// braidrun's pure parts, without starting processes: command-line parsing,
// line tagging, and the per-rank environment. braidrun_test.py covers the
// launcher end to end.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "braidrun/job_env.h"
#include "braidrun/options.h"
#include "braidrun/output_forwarder.h"
#include "parsed_options.h"  // this folder

namespace braid::run {
namespace {

TEST(BraidrunOptions, AcceptsEveryOptionForm) {
  const std::vector<std::vector<const char*>> forms = {
      {"-n", "4", "prog"}, {"-n4", "prog"},      {"--np", "4", "prog"},
      {"--np=4", "prog"},  {"-np", "4", "prog"}, {"-n", "4", "--", "prog"}};
  for (const auto& args : forms) {
    Parsed p = parse(args);
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.nranks, 4);
    EXPECT_EQ(p.options.command, std::vector<std::string>{"prog"});
  }
  Parsed p = parse({"-t", "--timeout=2.5", "-x", "A=1", "-xB=2=3", "-n", "1024", "prog", "-n", "7",
                    "--tag-output"});
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.options.nranks, 1024);
  EXPECT_TRUE(p.options.tagOutput);
  EXPECT_DOUBLE_EQ(p.options.timeoutSeconds, 2.5);
  EXPECT_EQ(p.options.extraEnv, (std::vector<std::string>{"A=1", "B=2=3"}));
  // Everything after the program belongs to the program.
  EXPECT_EQ(p.options.command, (std::vector<std::string>{"prog", "-n", "7", "--tag-output"}));
}

// The program and its arguments reach it as given, whatever they look like: braidrun's options
// end at the first word that is not one (or at --), and nothing after it is parsed.
TEST(BraidrunOptions, PassesTheProgramThroughUntouched) {
  using Words = std::vector<std::string>;
  const std::vector<std::pair<std::vector<const char*>, Words>> cases = {
      {{"-n", "2", "--", "-x", "--help", "--"}, {"-x", "--help", "--"}},
      {{"-n", "2", "--", "--", "a"}, {"--", "a"}},
      {{"-n", "2", "prog", "--", "-np", "3", "--bogus=1", ""},
       {"prog", "--", "-np", "3", "--bogus=1", ""}},
      {{"-np", "2", "-x", "-n=1", "prog", "-h"}, {"prog", "-h"}},  // -x takes "-n=1" as its value
      {{"-n", "2", "-", "x"}, {"-", "x"}},
      {{"-n", "2", "--timeout", "5", "/bin/echo", "-t", "--timeout", "0"},
       {"/bin/echo", "-t", "--timeout", "0"}},
  };
  for (const auto& [args, command] : cases) {
    Parsed p = parse(args);
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.command, command);
  }
  EXPECT_EQ(parse({"-np", "3", "prog"}).options.nranks, 3);
  Parsed unknown = parse({"-n", "2", "--bogus", "prog"});
  EXPECT_FALSE(unknown.ok);
  EXPECT_NE(unknown.error.find("'--bogus'"), std::string::npos) << unknown.error;
}

TEST(BraidrunOptions, RejectsBadRankCounts) {
  for (const char* n : {"0", "-1", "1025", "abc", "4x", "", " 4", "99999999999999999999"}) {
    Parsed p = parse({"-n", n, "prog"});
    EXPECT_FALSE(p.ok) << "-n '" << n << "'";
    EXPECT_NE(p.error.find("1 to 1024"), std::string::npos) << p.error;
  }
  Parsed missing = parse({"prog"});
  EXPECT_FALSE(missing.ok);
  EXPECT_NE(missing.error.find("-n"), std::string::npos) << missing.error;
  EXPECT_FALSE(parse({"-n"}).ok);
}

TEST(BraidrunOptions, RejectsOtherMistakes) {
  EXPECT_FALSE(parse({"-n", "2"}).ok);                              // no program
  EXPECT_FALSE(parse({"-n", "2", "--bogus", "prog"}).ok);           // unknown option
  EXPECT_FALSE(parse({"-n", "2", "--timeout", "0", "prog"}).ok);    // not positive
  EXPECT_FALSE(parse({"-n", "2", "--timeout", "nan", "prog"}).ok);  // not finite
  EXPECT_FALSE(parse({"-n", "2", "-x", "NOVALUE", "prog"}).ok);
  EXPECT_FALSE(parse({"-n", "2", "-x", "=1", "prog"}).ok);
  EXPECT_FALSE(parse({"-n", "2", "--tag-output=yes", "prog"}).ok);
  EXPECT_TRUE(parse({"--help"}).ok);  // needs neither -n nor a program
  EXPECT_TRUE(parse({"--version"}).ok);
}

std::string tagAll(const std::vector<std::string>& chunks, size_t maxLine = 64 << 10) {
  LineTagger tagger("[3] ", maxLine);
  std::string out;
  for (const std::string& chunk : chunks) tagger.feed(chunk, &out);
  tagger.finish(&out);
  return out;
}

TEST(BraidrunLineTagger, JoinsPartialWritesIntoWholeLines) {
  EXPECT_EQ(tagAll({"he", "llo", "\nwor", "ld\n"}), "[3] hello\n[3] world\n");
  EXPECT_EQ(tagAll({"a\nb\n\nc"}), "[3] a\n[3] b\n[3] \n[3] c\n");
  EXPECT_EQ(tagAll({}), "");
  EXPECT_EQ(tagAll({"", "\n"}), "[3] \n");
}

TEST(BraidrunLineTagger, EmitsOnlyCompleteLinesBeforeTheEnd) {
  LineTagger tagger("[0] ");
  std::string out;
  tagger.feed("first\nsecond-half", &out);
  EXPECT_EQ(out, "[0] first\n");  // the half line waits for its end
  tagger.feed("-done\n", &out);
  EXPECT_EQ(out, "[0] first\n[0] second-half-done\n");
}

TEST(BraidrunLineTagger, CutsOverlongLines) {
  EXPECT_EQ(tagAll({"abcdefgh", "ij\nk"}, 4), "[3] abcd\n[3] efgh\n[3] ij\n[3] k\n");
  EXPECT_EQ(tagAll({"ab", "cd", "e"}, 4), "[3] abcd\n[3] e\n");
}

std::string valueOf(const std::vector<std::string>& env, const std::string& name) {
  std::string value = "<unset>";
  int seen = 0;
  for (const std::string& entry : env) {
    if (entry.rfind(name + "=", 0) == 0) {
      value = entry.substr(name.size() + 1);
      ++seen;
    }
  }
  return seen <= 1 ? value : "<duplicated>";
}

TEST(BraidrunJobEnv, SetsLauncherVariablesOverInheritedOnes) {
  ::setenv("RANK", "99", 1);  // as if braidrun ran inside another launcher's job
  ::setenv("BRAIDRUN_PARTS_TEST_KEEP", "kept", 1);
  JobIdentity job;
  std::string error;
  ASSERT_TRUE(makeJobIdentity(&job, &error)) << error;
  EXPECT_EQ(job.tag.size(), 8u);
  EXPECT_EQ(job.secret.size(), 32u);
  EXPECT_NE(job.rootPort, job.masterPort);

  std::vector<std::string> env = rankEnvironment(job, 2, 5, {"EXTRA=1", "BRAID_RANK=7"});
  EXPECT_EQ(valueOf(env, "RANK"), "2");
  EXPECT_EQ(valueOf(env, "BRAID_NRANKS"), "5");
  EXPECT_EQ(valueOf(env, "BRAID_LOCAL_RANK"), "2");
  EXPECT_EQ(valueOf(env, "LOCAL_WORLD_SIZE"), "5");
  EXPECT_EQ(valueOf(env, "BRAID_ROOT"), "127.0.0.1:" + std::to_string(job.rootPort));
  EXPECT_EQ(valueOf(env, "MASTER_PORT"), std::to_string(job.masterPort));
  EXPECT_EQ(valueOf(env, "BRAID_JOB_TAG"), job.tag);
  EXPECT_EQ(valueOf(env, "EXTRA"), "1");
  EXPECT_EQ(valueOf(env, "BRAID_RANK"), "7");  // -x has the last word
  EXPECT_EQ(valueOf(env, "BRAIDRUN_PARTS_TEST_KEEP"), "kept");
  ::unsetenv("RANK");
  ::unsetenv("BRAIDRUN_PARTS_TEST_KEEP");
}

}  // namespace
}  // namespace braid::run
