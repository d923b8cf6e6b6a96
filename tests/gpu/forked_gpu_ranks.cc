#include "forked_gpu_ranks.h"

#include <cstdio>

#include "rank_processes.h"

namespace braid::testing {

int gpuVerdict(const char* name, const std::vector<int>& codes) {
  bool allSkipped = true, allOk = true;
  for (int c : codes) {
    allSkipped &= c == kSkipped;
    allOk &= c == 0;
  }
  if (allSkipped) {
    std::printf("skipped: no CUDA device\n");
    return kSkipped;
  }
  std::printf("%s: %s\n", name, allOk ? "every rank correct" : "FAILED");
  return allOk ? 0 : 1;
}

int runForkedGpuRanks(const char* name, int nranks, double deadlineSeconds,
                      const std::function<int(int rank, const braidUniqueId& id)>& runRank) {
  RankProcesses processes(nranks);
  if (!processes.startWithUniqueId([&](int rank) {
        braidUniqueId id;
        if (!processes.receiveUniqueId(rank, &id)) return 1;
        return runRank(rank, id);
      })) {
    return 1;
  }
  std::vector<int> codes;
  for (const ChildExit& e : processes.waitAll(deadlineSeconds)) {
    if (e.overdue) std::fprintf(stderr, "%s: a rank was still running at the deadline\n", name);
    codes.push_back(e.exited ? e.code : 1);
  }
  return gpuVerdict(name, codes);
}

}  // namespace braid::testing
