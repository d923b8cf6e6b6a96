// Calls for the device-proxy tests (tests/unit/device_proxy*_test.cc): int32 inputs every
// rank can recompute, their sums (wrapping as int32 addition does), collective Ops built as
// the C API builds them, and the C API's route for device buffers, onto a CPU fake stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "braid.h"
#include "comm/op.h"
#include "core/status.h"
#include "support/fake_stream_ops.h"

namespace braid::testing {

/// What "device" outputs hold before a call writes them.
constexpr int32_t kProxyPoison = -7;

/// Element i of `rank`'s input for the call tagged `salt`: distinct per rank, index, call.
int32_t proxyInput(int rank, size_t i, int salt);
/// The sum over ranks 0..nranks-1 of proxyInput(r, i, salt), wrapping as int32 does.
int32_t proxySum(int nranks, size_t i, int salt);
std::vector<int32_t> proxyInputs(int rank, size_t count, int salt);

/// An int32 sum collective on `comm` (null: no communicator, for pure Op tests).
Op proxyCollective(braidComm_t comm, coll::CollKind kind, const char* api, const void* send,
                   void* recv, size_t count);

/// What the C API does with device buffers on a communicator without a device group:
/// validate, check health, enqueue on the communicator's proxy.
Status enqueueOnFake(const Op& op, FakeStream& stream);

/// After a failure on some rank, on every rank: the stream is released (failed only when
/// `expectStreamError`: this rank's own stream failed), the communicator holds an async
/// error, and the next call fails. gtest expectations.
void expectFailedEverywhere(braidComm_t comm, int rank, FakeStream& stream, bool expectStreamError);

/// "" when got[i] == want(i) for all i, else how many differ and the first.
template <typename Want>
std::string proxyMismatches(const std::vector<int32_t>& got, Want want) {
  size_t bad = 0;
  std::string first;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == want(i)) continue;
    if (bad++ == 0) {
      first = "element " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", want " +
              std::to_string(want(i));
    }
  }
  return bad == 0 ? "" : std::to_string(bad) + " wrong, first " + first;
}

}  // namespace braid::testing
