// The flight recorder, read the way an operator reads it: from the log.
//
// A collective that stalls because a peer never arrives must leave, in the
// BRAID_DEBUG=WARN log of the rank that timed out, recorder lines naming the
// op and the peer it was waiting for; completed collectives show as done.
// With BRAID_FLIGHT_RECORDER_SIGNAL=USR1, `kill -USR1` prints every live
// communicator's recorder, and the handler goes away with the last one.
//
// The log sink is configured once per process from the environment, so this
// file sets BRAID_DEBUG and BRAID_DEBUG_FILE before any test runs (ctest runs
// each test in a process of its own).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/spawn.h"

namespace braid::testing {
namespace {

std::string logPath() {
  static const std::string path = "/tmp/braid-recorder-test-" + std::to_string(getpid()) + ".log";
  return path;
}

// Runs before main: the log sink reads these at the first log line.
const bool kLogConfigured = [] {
  setenv("BRAID_DEBUG", "WARN", 1);
  setenv("BRAID_DEBUG_FILE", logPath().c_str(), 1);
  return true;
}();

std::string readLog() {
  std::ifstream in(logPath());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Lines of `text` that contain every one of `words`.
int linesWithAll(const std::string& text, const std::vector<std::string>& words) {
  std::istringstream in(text);
  int found = 0;
  for (std::string line; std::getline(in, line);) {
    bool all = true;
    for (const std::string& w : words) all = all && line.find(w) != std::string::npos;
    found += all;
  }
  return found;
}

// The sink keeps the file open (appending), so tests empty it rather than
// delete it; it is deleted once, when the test program ends.
class LogFileCleanup : public ::testing::Environment {
 public:
  void TearDown() override { std::remove(logPath().c_str()); }
};
[[maybe_unused]] ::testing::Environment* const kCleanup =
    ::testing::AddGlobalTestEnvironment(new LogFileCleanup);

class FaultRecorder : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kLogConfigured);
    std::ofstream(logPath(), std::ios::trunc).close();
  }
};

TEST_F(FaultRecorder, StalledCollectiveLogNamesTheOpAndTheSilentPeer) {
  std::vector<braidComm_t> comms = initRanks(2, SpawnOptions::withTransport("shm", 2));
  ASSERT_EQ(comms.size(), 2u);
  std::vector<float> buf(1 << 16, 1.0f);
  // One all-reduce that completes on both ranks, then rank 0 alone.
  std::thread peer([&] {
    std::vector<float> mine(buf.size(), 1.0f);
    EXPECT_EQ(braidAllReduce(mine.data(), mine.data(), mine.size(), braidFloat32, braidSum,
                             comms[1], nullptr),
              braidSuccess);
  });
  ASSERT_EQ(
      braidAllReduce(buf.data(), buf.data(), buf.size(), braidFloat32, braidSum, comms[0], nullptr),
      braidSuccess);
  peer.join();
  EXPECT_EQ(braidBroadcast(buf.data(), buf.data(), buf.size(), braidFloat32, 1, comms[0], nullptr),
            braidTimeout);
  const std::string log = readLog();
  EXPECT_EQ(linesWithAll(log, {"flight recorder, rank 0 of 2", "timeout"}), 1) << log;
  EXPECT_EQ(linesWithAll(log, {"flight recorder, rank 0", "#0 braidAllReduce", "done"}), 1) << log;
  EXPECT_EQ(linesWithAll(log, {"flight recorder, rank 0", "#1 braidBroadcast", "FAILED", "root 1",
                               "no progress"}),
            1)
      << log;
  EXPECT_EQ(linesWithAll(log, {"flight recorder, rank 0", "peer 1: sent 0/0 B, received 0/",
                               "waiting to receive from rank 1"}),
            1)
      << log;
  for (braidComm_t comm : comms) braidCommDestroy(comm);
}

TEST_F(FaultRecorder, SignalPrintsEveryLiveCommunicator) {
  ScopedEnv env("BRAID_FLIGHT_RECORDER_SIGNAL", "USR1");
  std::vector<braidComm_t> comms = initRanks(2, SpawnOptions::withTransport("shm", 30));
  ASSERT_EQ(comms.size(), 2u);
  // 70 barriers: the ring keeps the last 64.
  spawn(1, [](braidComm_t, int) {});  // a third communicator comes and goes meanwhile
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      for (int i = 0; i < 70; ++i) ASSERT_EQ(braidBarrier(comms[r], nullptr), braidSuccess);
    });
  }
  for (auto& t : ranks) t.join();
  ASSERT_EQ(kill(getpid(), SIGUSR1), 0);
  std::string log;
  for (int i = 0; i < 250 && linesWithAll(log, {"on signal"}) < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    log = readLog();
  }
  EXPECT_EQ(linesWithAll(log, {"(on signal): last 64 of 70 stages"}), 2) << log;
  EXPECT_EQ(linesWithAll(log, {"#69 braidBarrier", "done"}), 2) << log;
  EXPECT_EQ(linesWithAll(log, {"#5 braidBarrier"}), 0) << "the ring kept more than 64\n" << log;
  for (braidComm_t comm : comms) braidCommDestroy(comm);
  struct sigaction now {};
  ASSERT_EQ(sigaction(SIGUSR1, nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, SIG_DFL) << "the handler outlived the last communicator";
}

}  // namespace
}  // namespace braid::testing
