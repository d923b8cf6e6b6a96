#include "support/sweep_runner.h"

#include <atomic>
#include <chrono>
#include <cstdio>

namespace braid::testing {

std::string sweepParamName(const ::testing::TestParamInfo<SweepParam>& info) {
  return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "ranks";
}

void runSweepOnThreads(int nranks, const SweepSpec& spec, const SpawnOptions& options) {
  const std::vector<CollectiveCase> cases = sweepCases(spec, nranks);
  constexpr int kReportedPerRank = 4;  // the rest are counted, not printed
  const auto start = std::chrono::steady_clock::now();
  spawn(
      nranks,
      [&](braidComm_t comm, int rank) {
        int reported = 0;
        int failures = runCases(comm, cases, /*seed=*/1000 + nranks,
                                [&](const CollectiveCase& c, const CaseOutcome& o) {
                                  if (reported++ < kReportedPerRank) {
                                    ADD_FAILURE() << "rank " << rank << " of " << nranks << ": "
                                                  << c.describe() << ": " << o.failure;
                                  }
                                });
        if (failures > kReportedPerRank) {
          ADD_FAILURE() << "rank " << rank << ": " << failures << " cases failed in all";
        }
      },
      options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%zu cases on %d ranks in %.2f s\n", cases.size(), nranks, seconds);
}

}  // namespace braid::testing
