// Rank processes for the GPU tests that run the C API one rank per process
// (braidCommInitRank): the ranks are forked before this process starts CUDA or
// braid (neither survives a fork), the parent hands them its unique id, waits
// for them with a deadline (killing stragglers, so none is left behind), and
// the test's exit code is the verdict of theirs, where kSkipped (77, ctest's
// SKIP_RETURN_CODE) means a rank found no CUDA device.
#pragma once

#include <functional>
#include <vector>

#include "braid.h"

namespace braid::testing {

/// Exit code of a rank, and of the test, without a CUDA device.
constexpr int kSkipped = 77;

/// The test's exit code from its ranks' exit codes: kSkipped when all skipped, 0 when all
/// passed, 1 otherwise. Prints "skipped: no CUDA device" or "<name>: every rank correct" /
/// "<name>: FAILED".
int gpuVerdict(const char* name, const std::vector<int>& codes);

/// Forks `nranks` processes, each running runRank(rank, id) with the parent's unique id and
/// exiting with its result; waits for them at most `deadlineSeconds`, then returns their
/// gpuVerdict (a rank that was killed or overdue counts as failed).
int runForkedGpuRanks(const char* name, int nranks, double deadlineSeconds,
                      const std::function<int(int rank, const braidUniqueId& id)>& runRank);

}  // namespace braid::testing
