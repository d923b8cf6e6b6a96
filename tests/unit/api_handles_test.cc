// Communicator handles at the C boundary (comm/handle_table.h): a garbage handle, a handle
// used after braidCommDestroy or braidCommAbort, and a second destroy are each answered
// with braidInvalidArgument and a sentence, never a crash; braidCommAbort never frees a
// communicator while a call is inside it; braidCommFinalize refuses a second call and later
// collectives, and reports a broken communicator's error.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "api/guard.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

void expectRejected(braidResult_t result, braidComm_t comm, const std::string& call) {
  EXPECT_EQ(result, braidInvalidArgument) << call << ": " << braidGetErrorString(result);
  const std::string message = braidGetLastError(nullptr);
  EXPECT_NE(message.find("not a live communicator"), std::string::npos)
      << call << ": last error \"" << message << "\"";
  // The handle's own last error is a sentence too, not a read of freed memory.
  EXPECT_NE(std::string(braidGetLastError(comm)).find("not a live communicator"), std::string::npos)
      << call;
}

// Every call that takes a communicator, on `comm`, must reject it.
void expectEveryCallRejects(braidComm_t comm) {
  float buf[4] = {1, 2, 3, 4};
  size_t counts[1] = {1}, displs[1] = {0};
  int value = 0;
  braidResult_t async;
  braidComm_t newcomm = nullptr;
  expectRejected(braidAllReduce(buf, buf, 1, braidFloat32, braidSum, comm, nullptr), comm,
                 "AllReduce");
  expectRejected(braidBroadcast(buf, buf, 1, braidFloat32, 0, comm, nullptr), comm, "Broadcast");
  expectRejected(braidAllGather(buf, buf, 1, braidFloat32, comm, nullptr), comm, "AllGather");
  expectRejected(
      braidAllToAllv(buf, counts, displs, buf + 2, counts, displs, braidFloat32, comm, nullptr),
      comm, "AllToAllv");
  expectRejected(braidSend(buf, 1, braidFloat32, 0, comm, nullptr), comm, "Send");
  expectRejected(braidBarrier(comm, nullptr), comm, "Barrier");
  expectRejected(braidCommCount(comm, &value), comm, "CommCount");
  expectRejected(braidCommUserRank(comm, &value), comm, "CommUserRank");
  expectRejected(braidCommCuDevice(comm, &value), comm, "CommCuDevice");
  expectRejected(braidCommRankHost(comm, 0, &value), comm, "CommRankHost");
  expectRejected(braidCommGetAsyncError(comm, &async), comm, "CommGetAsyncError");
  expectRejected(braidCommSplit(comm, 0, 0, &newcomm), comm, "CommSplit");
  expectRejected(braidCommShrink(comm, nullptr, 0, &newcomm), comm, "CommShrink");
  expectRejected(braidCommFinalize(comm), comm, "CommFinalize");
  expectRejected(braidCommDestroy(comm), comm, "CommDestroy");
  expectRejected(braidCommAbort(comm), comm, "CommAbort");
}

braidComm_t oneRank() {
  std::vector<braidComm_t> comms = initRanks(1, SpawnOptions::withTransport("shm", 10));
  return comms.empty() ? nullptr : comms[0];
}

TEST(ApiHandles, GarbageHandlesAreRejected) {
  // Odd values, an address on the stack that holds zeros, and one full of ones: none was
  // returned by an init call.
  alignas(64) static unsigned char zeros[4096] = {};
  alignas(64) static unsigned char ones[4096];
  std::memset(ones, 0xFF, sizeof(ones));
  for (braidComm_t garbage :
       {reinterpret_cast<braidComm_t>(uintptr_t{0xdeadbeef}),
        reinterpret_cast<braidComm_t>(uintptr_t{0x1}), reinterpret_cast<braidComm_t>(zeros),
        reinterpret_cast<braidComm_t>(ones), reinterpret_cast<braidComm_t>(~uintptr_t{0} - 0x4a)}) {
    SCOPED_TRACE(::testing::Message() << "handle " << static_cast<void*>(garbage));
    expectEveryCallRejects(garbage);
  }
}

TEST(ApiHandles, UseAfterDestroyAndDoubleDestroyAreRejected) {
  braidComm_t comm = oneRank();
  ASSERT_NE(comm, nullptr);
  int count = 0;
  ASSERT_EQ(braidCommCount(comm, &count), braidSuccess);
  EXPECT_EQ(count, 1);
  ASSERT_EQ(braidCommDestroy(comm), braidSuccess);
  expectEveryCallRejects(comm);  // includes a second destroy and an abort
  // A new communicator may take the freed slot: the old handle still does not reach it.
  braidComm_t next = oneRank();
  ASSERT_NE(next, nullptr);
  EXPECT_NE(next, comm);
  expectRejected(braidCommCount(comm, &count), comm, "CommCount on the old handle");
  EXPECT_EQ(braidCommCount(next, &count), braidSuccess) << braidGetLastError(next);
  EXPECT_EQ(braidCommDestroy(next), braidSuccess);
  EXPECT_EQ(braidCommDestroy(nullptr), braidSuccess) << "NULL is accepted, as in NCCL";
}

TEST(ApiHandles, UseAfterAbortIsRejected) {
  braidComm_t comm = oneRank();
  ASSERT_NE(comm, nullptr);
  ASSERT_EQ(braidCommAbort(comm), braidSuccess);
  expectEveryCallRejects(comm);
}

// A call inside the communicator (here: an operation counted in flight, as a group's run
// counts itself) keeps braidCommAbort from freeing it; the abort request reaches the call at
// once, and the communicator is freed only after the call leaves.
TEST(ApiHandles, AbortWaitsForTheCallInside) {
  braidComm_t comm = oneRank();
  ASSERT_NE(comm, nullptr);
  Comm* inside = api::toComm(comm);
  ASSERT_NE(inside, nullptr);
  inside->enter();
  std::atomic<bool> returned{false};
  std::thread aborter([&] {
    EXPECT_EQ(braidCommAbort(comm), braidSuccess);
    returned = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!inside->abortRequested() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_TRUE(inside->abortRequested()) << "the call inside was not told of the abort";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(returned.load()) << "braidCommAbort returned while a call was inside";
  // Still allocated: the call may go on reading its communicator.
  EXPECT_EQ(inside->nranks(), 1);
  int count = 0;
  EXPECT_EQ(braidCommCount(comm, &count), braidInvalidArgument) << "new calls are refused";
  inside->leave();
  aborter.join();
  EXPECT_TRUE(returned.load());
}

TEST(ApiHandles, FinalizeTwiceAndCollectivesAfterItAreRefused) {
  braidComm_t comm = oneRank();
  ASSERT_NE(comm, nullptr);
  int32_t value = 7, out = 0;
  ASSERT_EQ(braidCommFinalize(comm), braidSuccess) << braidGetLastError(comm);
  EXPECT_EQ(braidCommFinalize(comm), braidInvalidUsage);
  EXPECT_NE(std::string(braidGetLastError(comm)).find("already finalized"), std::string::npos)
      << braidGetLastError(comm);
  EXPECT_EQ(braidAllReduce(&value, &out, 1, braidInt32, braidSum, comm, nullptr),
            braidInvalidUsage);
  EXPECT_NE(std::string(braidGetLastError(comm)).find("finalized"), std::string::npos)
      << braidGetLastError(comm);
  EXPECT_EQ(out, 0) << "a collective ran after braidCommFinalize";
  braidComm_t sub = nullptr;
  EXPECT_EQ(braidCommSplit(comm, 0, 0, &sub), braidInvalidUsage);
  // Queries still answer, and destroy releases it.
  int rank = -1;
  EXPECT_EQ(braidCommUserRank(comm, &rank), braidSuccess);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
}

TEST(ApiHandles, FinalizeReportsABrokenCommunicator) {
  braidComm_t comm = oneRank();
  ASSERT_NE(comm, nullptr);
  api::toComm(comm)->fail(remoteError("rank 3 went away (test)", 3));
  EXPECT_EQ(braidCommFinalize(comm), braidRemoteError);
  EXPECT_NE(std::string(braidGetLastError(comm)).find("rank 3 went away"), std::string::npos)
      << braidGetLastError(comm);
  EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
}

}  // namespace
}  // namespace braid::testing
