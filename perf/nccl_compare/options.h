// braid-nccl-compare's command line (see main.cc for what it measures).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace braid::perf {

enum class Collective { kAllReduce, kAllGather, kReduceScatter };

/// Where the ranks run: threads of one process, one process each, or threads and then, if
/// NCCL refuses that, processes.
enum class Layout { kAuto, kThreads, kProcesses };

/// "allreduce", "allgather", "reducescatter".
const char* collectiveName(Collective c);

struct Options {
  bool query = false;                 // --query: print the device and NCCL, run nothing
  std::string ncclPath;               // --nccl: libnccl.so.2 to open ("" = the loader's search)
  int ranks = 2;                      // --ranks: ranks sharing GPU 0
  Layout layout = Layout::kAuto;      // --layout auto|threads|processes
  size_t minBytes = 8;                // --min
  size_t maxBytes = size_t(1) << 30;  // --max
  size_t factor = 2;                  // --factor: size multiplier per step
  int rounds = 3;                     // --rounds: braid/NCCL pairs per size; the median is kept
  double deadlineSeconds = 140;       // --deadline: the watchdog ends the run after this long
  std::string jsonPath;               // --json
  std::vector<Collective> collectives = {Collective::kAllReduce, Collective::kAllGather,
                                         Collective::kReduceScatter};
};

/// Reads argv into `o`. Returns nothing when the program should go on, else its exit status:
/// 0 after --help, 2 after one sentence naming the argument refused (tools/cli/cli.h).
std::optional<int> parseOptions(int argc, const char* const* argv, Options* o);

}  // namespace braid::perf
