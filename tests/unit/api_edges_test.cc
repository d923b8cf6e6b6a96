// NCCL's semantics at the edges of the C API: a call rejected inside a group fails
// braidGroupEnd and drops the whole group; all-to-all-v counts and displacements whose
// extent would wrap around are rejected (a NULL buffer cannot slip past the NULL check);
// ranks that pass different counts without BRAID_CHECK are told so, with both ranks named.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "support/spawn.h"

namespace braid::testing {
namespace {

constexpr braidDataType_t kBadType = static_cast<braidDataType_t>(42);

braidComm_t oneRank() {
  std::vector<braidComm_t> comms = initRanks(1, SpawnOptions::withTransport("shm", 10));
  return comms.empty() ? nullptr : comms[0];
}

TEST(ApiEdges, ARejectedCallFailsGroupEndAndDropsTheGroup) {
  braidComm_t comm = oneRank();
  ASSERT_NE(comm, nullptr);
  std::vector<int32_t> send(8, 5), recv(8, -1), sum(8, -1);
  ASSERT_EQ(braidGroupStart(), braidSuccess);
  EXPECT_EQ(braidSend(send.data(), 8, braidInt32, 0, comm, nullptr), braidSuccess);
  EXPECT_EQ(braidRecv(recv.data(), 8, braidInt32, 0, comm, nullptr), braidSuccess);
  EXPECT_EQ(braidAllReduce(send.data(), sum.data(), 8, kBadType, braidSum, comm, nullptr),
            braidInvalidArgument);
  EXPECT_EQ(braidGroupEnd(), braidInvalidArgument);
  const std::string message = braidGetLastError(nullptr);
  EXPECT_NE(message.find("dropped"), std::string::npos) << message;
  EXPECT_NE(message.find("datatype 42"), std::string::npos) << "names the first error: " << message;
  EXPECT_EQ(recv, std::vector<int32_t>(8, -1)) << "the group's send/recv ran after a rejection";
  // The next group starts clean and runs.
  ASSERT_EQ(braidGroupStart(), braidSuccess);
  EXPECT_EQ(braidSend(send.data(), 8, braidInt32, 0, comm, nullptr), braidSuccess);
  EXPECT_EQ(braidRecv(recv.data(), 8, braidInt32, 0, comm, nullptr), braidSuccess);
  EXPECT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(comm);
  EXPECT_EQ(recv, send);
  EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
}

TEST(ApiEdges, AGarbageHandleInsideAGroupDropsIt) {
  braidComm_t comm = oneRank();
  ASSERT_NE(comm, nullptr);
  int32_t value = 3, out = -1, dummy = 0;
  ASSERT_EQ(braidGroupStart(), braidSuccess);
  EXPECT_EQ(braidAllReduce(&value, &out, 1, braidInt32, braidSum, comm, nullptr), braidSuccess);
  EXPECT_EQ(braidAllReduce(&value, &dummy, 1, braidInt32, braidSum,
                           reinterpret_cast<braidComm_t>(uintptr_t{0x1234b5}), nullptr),
            braidInvalidArgument);
  EXPECT_EQ(braidGroupEnd(), braidInvalidArgument);
  EXPECT_EQ(out, -1);
  EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
}

TEST(ApiEdges, AllToAllvExtentsThatWrapAreRejected) {
  braidComm_t comm = oneRank();
  ASSERT_NE(comm, nullptr);
  float buf[4] = {};
  // displacement + count wraps to a tiny extent: with NULL buffers it used to pass the NULL
  // check and run; on real buffers it would read far outside them.
  const size_t hugeDispl = (SIZE_MAX / 4) + 1;  // x 4 bytes wraps to 0
  size_t counts[1] = {1}, zero[1] = {0}, wrap[1] = {hugeDispl}, endWrap[1] = {SIZE_MAX};
  for (const size_t* displs : {wrap, endWrap}) {
    EXPECT_EQ(
        braidAllToAllv(nullptr, counts, displs, buf, counts, zero, braidFloat32, comm, nullptr),
        braidInvalidArgument);
    EXPECT_NE(std::string(braidGetLastError(comm)).find("sdispls[0]"), std::string::npos)
        << braidGetLastError(comm);
    EXPECT_EQ(
        braidAllToAllv(buf, counts, zero, nullptr, counts, displs, braidFloat32, comm, nullptr),
        braidInvalidArgument);
    EXPECT_NE(std::string(braidGetLastError(comm)).find("rdispls[0]"), std::string::npos)
        << braidGetLastError(comm);
  }
  size_t hugeCount[1] = {SIZE_MAX / 2};
  EXPECT_EQ(braidAllToAllv(buf, hugeCount, zero, buf, hugeCount, zero, braidFloat32, comm, nullptr),
            braidInvalidArgument);
  EXPECT_NE(std::string(braidGetLastError(comm)).find("sendcounts[0]"), std::string::npos)
      << braidGetLastError(comm);
  // Each NULL array is named.
  EXPECT_EQ(
      braidAllToAllv(buf, counts, zero, buf + 2, counts, nullptr, braidFloat32, comm, nullptr),
      braidInvalidArgument);
  EXPECT_NE(std::string(braidGetLastError(comm)).find("rdispls is NULL"), std::string::npos)
      << braidGetLastError(comm);
  // Good input still works.
  float one[1] = {2.5f}, got[1] = {0};
  EXPECT_EQ(braidAllToAllv(one, counts, zero, got, counts, zero, braidFloat32, comm, nullptr),
            braidSuccess)
      << braidGetLastError(comm);
  EXPECT_EQ(got[0], 2.5f);
  EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
}

// Without BRAID_CHECK nothing compares the calls before they run, so a count mismatch shows
// when a message arrives with another size than expected. That must read as what it is, on
// every rank: the ranks that see the odd message first hand and the ones that hear of it
// from them, over either transport and at any rank count.
void expectSizeMismatchReported(const std::string& transport, int nranks) {
  spawn(
      nranks,
      [&transport, nranks](braidComm_t comm, int rank) {
        // (SCOPED_TRACE does not reach the rank threads.)
        const std::string where =
            transport + ", " + std::to_string(nranks) + " ranks, rank " + std::to_string(rank);
        // Two ranks with small counts; more with counts of many chunks, where only rank 1
        // differs and the others hear of it second hand.
        const size_t base = nranks == 2 ? 1000 : 1000003;
        const size_t count = rank == 1 ? 3 * base : base;
        std::vector<float> send(count, 1.0f), recv(count);
        const braidResult_t result =
            braidAllReduce(send.data(), recv.data(), count, braidFloat32, braidSum, comm, nullptr);
        const std::string message = braidGetLastError(comm);
        EXPECT_EQ(result, braidInvalidUsage) << where << ": " << message;
        for (const char* words : {"ranks passed different sizes", "BRAID_CHECK=1"}) {
          EXPECT_NE(message.find(words), std::string::npos) << where << ": " << message;
        }
        // Each rank names a pair with rank 1 in it (the odd one); which pair saw the
        // mismatch first depends on the algorithm and on timing.
        EXPECT_NE(message.find("rank 1"), std::string::npos) << where << ": " << message;
        EXPECT_NE(message.find(" sent a message of "), std::string::npos)
            << where << ": " << message;
        EXPECT_EQ(message.find("network error"), std::string::npos) << where << ": " << message;
        EXPECT_EQ(message.find("failed"), std::string::npos)
            << where << ": blames a rank: " << message;
      },
      SpawnOptions::withTransport(transport, 5));
}

TEST(ApiEdges, MismatchedCountsAreReportedAsSuch) {
  for (const char* transport : {"shm", "socket"}) expectSizeMismatchReported(transport, 2);
}

TEST(ApiEdges, MismatchedCountsAreReportedAsSuchAtThreeAndFourRanks) {
  for (const char* transport : {"shm", "socket"}) {
    for (const int nranks : {3, 4}) expectSizeMismatchReported(transport, nranks);
  }
}

}  // namespace
}  // namespace braid::testing
