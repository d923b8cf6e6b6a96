// The host's entry to the device executor kernel (kernel.cu), free of CUDA headers so that
// C++ code can call it. One launch runs one collective for one or several ranks of a
// communicator: grid = channels x ranks, one thread block per (channel, rank), each block
// walking its rank's plan with runChannel (executor.h). Ranks that share one GPU may be
// launched together (one launch, ranks = n), which is what braidCommInitAll on a single
// device needs: blocks of different ranks wait on each other, so they must be resident at
// once — the grid is small (channels x ranks blocks) and one launch guarantees they share
// the device rather than queueing behind each other on a stream.
#pragma once

#include <cstddef>
#include <cstdint>

#include "braid.h"
#include "collectives/device/executor.h"
#include "collectives/device/ll_protocol.h"
#include "collectives/device/simple_protocol.h"

namespace braid::device {

enum class Protocol : uint8_t { kSimple, kLl };

/// One rank's part of a launch; lives in device memory (the kernel reads it).
struct RankLaunch {
  ExecArgs exec;             // plan (device pointers), buffers, op, nranks, channels; channel unset
  void* sendEnds = nullptr;  // [channels][nranks] SimpleProtocol::SendEnd or LlProtocol::SendEnd
  void* recvEnds = nullptr;  // [channels][nranks] RecvEnds of the same protocol
};

struct LaunchConfig {
  /// Device memory, `rankCount` entries; or null with rankCount 1 to launch `single`, which
  /// travels by value in the kernel's parameters (nothing to keep alive after the call).
  const RankLaunch* ranks = nullptr;
  RankLaunch single;
  int rankCount = 1;
  int channels = 1;
  int threadsPerBlock = 256;
  braidDataType_t type = braidFloat32;
  Protocol protocol = Protocol::kSimple;
  int* status = nullptr;   // device int, 0 on entry; the worst ExecStatus of any block
  void* stream = nullptr;  // cudaStream_t
};

/// Enqueues the kernel on config.stream. Returns the cudaError_t of the launch (0 = queued).
int launchPlanKernel(const LaunchConfig& config);

}  // namespace braid::device
