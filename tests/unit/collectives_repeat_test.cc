// Repeated calls of one shape: the direct path (comm/direct_collective.h)
// reuses the runner its schedule-cache entry keeps, restarted on new buffers.
// These tests vary exactly what a reused runner must not carry over: buffer
// addresses and contents from call to call, in place and out of place, the
// scratch buffer moving when another shape grows it, entries evicted by more
// shapes than the cache holds, and group calls (the engine) interleaved with
// direct ones on the same cache. Every result is checked against sums
// computed here from the inputs' formula, in int32 (exact).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "braid.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

// Rank r's element k in call `call`: distinct per rank, element and call.
int32_t input(int rank, size_t k, int call) {
  return static_cast<int32_t>((rank + 1) * (k + 1) + 7 * call);
}

int32_t expectedSum(int nranks, size_t k, int call) {
  int32_t sum = 0;
  for (int r = 0; r < nranks; ++r) sum += input(r, k, call);
  return sum;
}

// One all-reduce of `count` int32 on fresh buffers; failures name the call.
void allReduceOnce(braidComm_t comm, int rank, int nranks, size_t count, int call, bool inPlace,
                   bool inGroup) {
  // Offsets that change with the call: freed and reallocated vectors of one
  // size tend to come back at the same address, which would hide stale pointers.
  const size_t offset = static_cast<size_t>(call) % 5;
  std::vector<int32_t> sendStorage(count + 5), recvStorage(count + 5, -1);
  int32_t* send = sendStorage.data() + offset;
  int32_t* recv = recvStorage.data() + 4 - offset % 4;
  for (size_t k = 0; k < count; ++k) send[k] = input(rank, k, call);
  int32_t* out = inPlace ? send : recv;
  if (inGroup) ASSERT_EQ(braidGroupStart(), braidSuccess);
  braidResult_t result = braidAllReduce(send, out, count, braidInt32, braidSum, comm, nullptr);
  if (inGroup) ASSERT_EQ(braidGroupEnd(), braidSuccess);
  ASSERT_EQ(result, braidSuccess) << "rank " << rank << " call " << call << ": "
                                  << braidGetLastError(comm);
  for (size_t k = 0; k < count; ++k) {
    if (out[k] != expectedSum(nranks, k, call)) {
      ADD_FAILURE() << "rank " << rank << " call " << call << " count " << count
                    << (inPlace ? " in place" : "") << (inGroup ? " in a group" : "")
                    << ": element " << k << " is " << out[k] << ", expected "
                    << expectedSum(nranks, k, call);
      return;
    }
  }
}

using RepeatParam = std::tuple<std::string, int>;  // transport, ranks
class RepeatTest : public ::testing::TestWithParam<RepeatParam> {};

TEST_P(RepeatTest, SameShapeOnNewBuffersAndContents) {
  const auto& [transport, nranks] = GetParam();
  spawn(
      nranks,
      [&, n = nranks](braidComm_t comm, int rank) {
        for (int call = 0; call < 12; ++call) {
          allReduceOnce(comm, rank, n, 5, call, /*inPlace=*/call % 3 == 0, /*inGroup=*/false);
        }
      },
      SpawnOptions::withTransport(transport));
}

TEST_P(RepeatTest, ScratchGrowsAndEntriesAreEvictedBetweenCalls) {
  const auto& [transport, nranks] = GetParam();
  spawn(
      nranks,
      [&, n = nranks](braidComm_t comm, int rank) {
        // Recursive doubling on 3-4 ranks folds through scratch: 16000 B need
        // more of it than 12 B (the buffer moves); 20 more counts overflow the
        // 16-entry cache, so both shapes are evicted and rebuilt.
        const size_t shapes[] = {3, 4000};
        for (int call = 0; call < 6; ++call) {
          for (size_t count : shapes) allReduceOnce(comm, rank, n, count, call, false, false);
          for (size_t extra = 1; extra <= 20; ++extra) {
            allReduceOnce(comm, rank, n, 16 + extra, call, call % 2 == 1, false);
          }
        }
      },
      SpawnOptions::withTransport(transport));
}

TEST_P(RepeatTest, GroupAndDirectCallsShareShapes) {
  const auto& [transport, nranks] = GetParam();
  spawn(
      nranks,
      [&, n = nranks](braidComm_t comm, int rank) {
        for (int call = 0; call < 8; ++call) {
          allReduceOnce(comm, rank, n, 9, call, false, /*inGroup=*/call % 2 == 0);
        }
      },
      SpawnOptions::withTransport(transport));
}

INSTANTIATE_TEST_SUITE_P(Grid, RepeatTest,
                         ::testing::Combine(::testing::Values("shm", "socket"),
                                            ::testing::Values(1, 2, 3, 4)),
                         [](const ::testing::TestParamInfo<RepeatParam>& info) {
                           return std::get<0>(info.param) + "_" +
                                  std::to_string(std::get<1>(info.param)) + "ranks";
                         });

}  // namespace
}  // namespace braid::testing
