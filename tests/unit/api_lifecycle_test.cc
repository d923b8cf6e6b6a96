// Communicator lifecycles: create/destroy cycles leak no descriptors or
// threads; communicators used at the same time from different threads stay
// independent; one group can mix collectives and point-to-point calls.
#include <dirent.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "support/collective_sweep.h"
#include "support/reference.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

int countEntries(const char* directory) {
  int count = 0;
  if (DIR* dir = opendir(directory)) {
    while (readdir(dir) != nullptr) ++count;
    closedir(dir);
  }
  return count;
}

// Helper threads may take a moment to wind down after a destroy: poll briefly.
int settledCount(const char* directory, int expected) {
  int count = countEntries(directory);
  for (int i = 0; i < 40 && count != expected; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    count = countEntries(directory);
  }
  return count;
}

void allReduceOnce(braidComm_t comm, int rank) {
  int64_t value = rank, sum = -1;
  EXPECT_EQ(braidAllReduce(&value, &sum, 1, braidInt64, braidSum, comm, nullptr), braidSuccess)
      << braidGetLastError(comm);
}

TEST(ApiLifecycle, CreateDestroyCyclesLeakNoDescriptorsOrThreads) {
  for (const char* transport : {"shm", "socket"}) {
    SCOPED_TRACE(transport);
    const SpawnOptions options = SpawnOptions::withTransport(transport, 15);
    spawn(3, allReduceOnce, options);  // first use may set up process-wide state
    const int fds = countEntries("/proc/self/fd");
    const int threads = countEntries("/proc/self/task");
    for (int cycle = 0; cycle < 8; ++cycle) spawn(3, allReduceOnce, options);
    EXPECT_EQ(settledCount("/proc/self/fd", fds), fds) << "file descriptors leaked over 8 cycles";
    EXPECT_EQ(settledCount("/proc/self/task", threads), threads) << "threads leaked over 8 cycles";
  }
}

// Two communicators (shm and socket) run sweeps at the same time, one thread
// per rank: they share the process, its group state and its kernels, nothing else.
TEST(ApiLifecycle, ConcurrentCommunicatorsStayIndependent) {
  std::vector<braidComm_t> shm = initRanks(3, SpawnOptions::withTransport("shm", 30));
  std::vector<braidComm_t> socket = initRanks(3, SpawnOptions::withTransport("socket", 30));
  ASSERT_EQ(shm.size(), 3u);
  ASSERT_EQ(socket.size(), 3u);
  SweepSpec spec;
  spec.collectives = {Collective::kAllReduce, Collective::kAllGather, Collective::kSendRecvRing,
                      Collective::kReduceScatter};
  spec.counts = {1, 4099};
  spec.largeCount = 0;
  const std::vector<CollectiveCase> cases = sweepCases(spec, 3);
  std::vector<std::thread> threads;
  for (auto* comms : {&shm, &socket}) {
    for (int rank = 0; rank < 3; ++rank) {
      braidComm_t comm = (*comms)[rank];
      // Different seeds: a message crossing between communicators would show.
      uint64_t seed = comms == &shm ? 1 : 2;
      threads.emplace_back([comm, rank, seed, &cases] {
        runCases(comm, cases, seed, [&](const CollectiveCase& c, const CaseOutcome& o) {
          ADD_FAILURE() << "rank " << rank << " seed " << seed << ": " << c.describe() << ": "
                        << o.failure;
        });
      });
    }
  }
  for (auto& thread : threads) thread.join();
  for (braidComm_t comm : shm) braidCommDestroy(comm);
  for (braidComm_t comm : socket) braidCommDestroy(comm);
}

TEST(ApiLifecycle, OneGroupMixesCollectivesAndPointToPoint) {
  spawn(
      4,
      [](braidComm_t comm, int rank) {
        const int right = (rank + 1) % 4, left = (rank + 3) % 4;
        std::vector<float> sum(1000), mine(1000, 0.5f * (rank + 1));
        std::vector<int32_t> out(33, rank * 7), in(33, -1);
        std::vector<uint8_t> bytes(5, rank == 3 ? 200 : 0);
        ASSERT_EQ(braidGroupStart(), braidSuccess);
        EXPECT_EQ(
            braidAllReduce(mine.data(), sum.data(), 1000, braidFloat32, braidSum, comm, nullptr),
            braidSuccess);
        EXPECT_EQ(braidSend(out.data(), 33, braidInt32, right, comm, nullptr), braidSuccess);
        EXPECT_EQ(braidBroadcast(bytes.data(), bytes.data(), 5, braidUint8, 3, comm, nullptr),
                  braidSuccess);
        EXPECT_EQ(braidRecv(in.data(), 33, braidInt32, left, comm, nullptr), braidSuccess);
        ASSERT_EQ(braidGroupEnd(), braidSuccess)
            << "rank " << rank << ": " << braidGetLastError(nullptr) << " / comm's last error: \""
            << braidGetLastError(comm) << "\"";
        EXPECT_EQ(sum, std::vector<float>(1000, 0.5f * (1 + 2 + 3 + 4)));
        EXPECT_EQ(in, std::vector<int32_t>(33, left * 7));
        EXPECT_EQ(bytes, std::vector<uint8_t>(5, 200));
      },
      SpawnOptions::withTransport("shm", 15));
}

}  // namespace
}  // namespace braid::testing
