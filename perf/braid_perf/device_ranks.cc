// See device_ranks.h.
#include "device_ranks.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "device_memory.h"

namespace braid::perf {
namespace {

constexpr int kDevice = 0;  // CUDA_VISIBLE_DEVICES selects which GPU this is
constexpr int kExitFailure = 1;

int fail(const std::string& message) {
  std::fprintf(stderr, "braid-perf: --memory device: %s\n", message.c_str());
  return kExitFailure;
}

}  // namespace

int runDeviceRanks(const Options& options, const std::function<int(const RankContext&)>& rankMain) {
  const std::string unavailable = deviceUnavailableReason(kDevice);
  if (!unavailable.empty()) return fail(unavailable);
  const int n = options.threads;
  std::vector<braidComm_t> comms(size_t(n), nullptr);
  const std::vector<int> devlist(size_t(n), kDevice);
  const braidResult_t result = braidCommInitAll(comms.data(), n, devlist.data());
  if (result != braidSuccess) {
    const char* detail = braidGetLastError(nullptr);
    return fail(std::string("braidCommInitAll failed: ") + braidGetErrorString(result) +
                (detail[0] != '\0' ? ": " : "") + detail);
  }
  std::vector<void*> streams(size_t(n), nullptr);
  Outcome ready = useDevice(kDevice);
  for (int r = 0; r < n && ready.ok(); ++r) ready = createStream(&streams[size_t(r)]);
  std::vector<int> status(size_t(n), kExitFailure);
  if (ready.ok()) {
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
      threads.emplace_back([&, r] {
        // The current device is per thread; rankMain finalizes or aborts comms[r].
        Outcome onDevice = useDevice(kDevice);
        if (!onDevice.ok()) {
          fail("rank " + std::to_string(r) + ": " + onDevice.message());
          braidCommAbort(comms[size_t(r)]);  // peers waiting on this rank fail fast
          return;
        }
        status[size_t(r)] = rankMain(RankContext{comms[size_t(r)], r, n, streams[size_t(r)]});
      });
    }
    for (std::thread& t : threads) t.join();
  } else {
    fail(ready.message());
    for (braidComm_t comm : comms) braidCommDestroy(comm);
  }
  for (void* stream : streams) destroyStream(stream);
  return *std::max_element(status.begin(), status.end());
}

}  // namespace braid::perf
