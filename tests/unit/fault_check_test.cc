// BRAID_CHECK=1 with more than one rank out of step: the error must name
// every rank that disagrees with rank 0, not only the first, on every rank
// (api_check_test.cc covers each kind of mismatch with one odd rank).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/spawn.h"

namespace braid::testing {
namespace {

TEST(FaultCheck, EveryDisagreeingRankIsNamed) {
  spawn(
      4,
      [](braidComm_t comm, int rank) {
        // Ranks 1 and 3 pass another count; ranks 0 and 2 agree.
        const size_t count = rank % 2 == 1 ? 600 : 500;
        std::vector<int32_t> buf(count, rank);
        braidResult_t r =
            braidAllReduce(buf.data(), buf.data(), count, braidInt32, braidMax, comm, nullptr);
        EXPECT_TRUE(r == braidInvalidUsage || r == braidRemoteError)
            << "rank " << rank << ": " << braidGetErrorString(r);
        const std::string message = braidGetLastError(comm);
        EXPECT_NE(message.find("rank 1 called braidAllReduce(count 600"), std::string::npos)
            << message;
        EXPECT_NE(message.find("rank 3 disagrees with rank 0 too"), std::string::npos) << message;
      },
      SpawnOptions::withTransport("shm", 20).set("BRAID_CHECK", "1"));
}

}  // namespace
}  // namespace braid::testing
