// braid-perf --memory device: the -t ranks of one process, all on one GPU.
//
// One braidCommInitAll whose devlist names the same device n times binds the ranks to a
// single-GPU device group (docs/CUDA.md); each rank then runs the ordinary braid-perf
// program in its own thread, with its own non-blocking stream, since a rank's kernel waits
// for its peers' kernels and two ranks on one stream would wait on each other forever.
#pragma once

#include <functional>

#include "collective.h"
#include "options.h"

namespace braid::perf {

/// Runs `rankMain` once per rank (each in its own thread, with context.stream set) and
/// returns the worst exit status; prints why and returns 1 when the GPU, the build or
/// braidCommInitAll cannot provide the ranks.
int runDeviceRanks(const Options& options, const std::function<int(const RankContext&)>& rankMain);

}  // namespace braid::perf
