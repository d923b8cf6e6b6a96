// braidCommInitAll when the system refuses one of its rank threads: an error naming the
// rank, no communicator left behind, and no std::terminate (a joinable std::thread
// destroyed while unwinding used to end the process). The refusal is injected through
// api/rank_threads.h, since a real one (thread limits) would starve the rest of the suite.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/rank_threads.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

TEST(ApiInitAll, AThreadThatCannotStartIsAnErrorNotAnAbort) {
  ScopedEnv env(std::vector<std::pair<std::string, std::string>>{{"BRAID_TRANSPORT", "shm"},
                                                                 {"BRAID_TIMEOUT", "10"}});
  for (int failing : {0, 2, 3}) {
    SCOPED_TRACE(::testing::Message() << "thread " << failing << " refused");
    std::vector<braidComm_t> comms(4, reinterpret_cast<braidComm_t>(uintptr_t{1}));
    api::failThreadStartForTesting(failing);
    const braidResult_t result = braidCommInitAll(comms.data(), 4, nullptr);
    api::failThreadStartForTesting(-1);
    EXPECT_EQ(result, braidSystemError) << braidGetErrorString(result);
    const std::string message = braidGetLastError(nullptr);
    EXPECT_NE(message.find("thread of rank " + std::to_string(failing)), std::string::npos)
        << message;
    for (braidComm_t comm : comms) EXPECT_EQ(comm, nullptr);
  }
  // The next init works: nothing of the failed one is left waiting.
  std::vector<braidComm_t> comms(3, nullptr);
  ASSERT_EQ(braidCommInitAll(comms.data(), 3, nullptr), braidSuccess) << braidGetLastError(nullptr);
  for (braidComm_t comm : comms) EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
}

}  // namespace
}  // namespace braid::testing
