// The device executor kernel: one thread block per (channel, rank), each running
// runChannel (executor.h) over the FIFOs of its rank. Instantiated once per element type
// and protocol (20 kernels); the reduction op is a run-time switch inside the slice loop
// (element_ops.h withOp), which keeps nvcc's work — and CI build time — small.
#include <cuda_runtime.h>

#include "collectives/device/launch.h"

namespace braid::device {
namespace {

template <class T, class Proto>
__global__ void __launch_bounds__(512)
    planKernel(const RankLaunch* ranks, const RankLaunch single, int* status) {
  const RankLaunch& r = ranks != nullptr ? ranks[blockIdx.y] : single;
  ExecArgs exec = r.exec;
  exec.channel = int(blockIdx.x);
  const size_t base = size_t(exec.channel) * size_t(exec.nranks);
  auto* sends = static_cast<typename Proto::SendEnd*>(r.sendEnds) + base;
  auto* recvs = static_cast<typename Proto::RecvEnd*>(r.recvEnds) + base;
  // One step table per block, in shared memory (step_table.h): no per-thread stack.
  __shared__ StepTable table;
  const int result = runChannel<T, Proto>(Group{}, exec, sends, recvs, table);
  // Any failure is worth reporting; blocks racing to store different codes is harmless.
  if (threadIdx.x == 0 && result != kExecOk) *reinterpret_cast<volatile int*>(status) = result;
}

template <class Proto>
int launchAs(const LaunchConfig& c) {
  const dim3 grid(unsigned(c.channels), unsigned(c.rankCount));
  const dim3 block(unsigned(c.threadsPerBlock));
  auto stream = static_cast<cudaStream_t>(c.stream);
  bool known = withType(c.type, [&](auto tag) {
    using T = decltype(tag);
    planKernel<T, Proto><<<grid, block, 0, stream>>>(c.ranks, c.single, c.status);
  });
  if (!known) return int(cudaErrorInvalidValue);
  return int(cudaGetLastError());
}

}  // namespace

int launchPlanKernel(const LaunchConfig& config) {
  if (config.channels < 1 || config.rankCount < 1 || config.threadsPerBlock < 32 ||
      config.threadsPerBlock > 512 || config.status == nullptr ||
      (config.ranks == nullptr && config.rankCount != 1)) {
    return int(cudaErrorInvalidValue);
  }
  return config.protocol == Protocol::kLl ? launchAs<LlProtocol>(config)
                                          : launchAs<SimpleProtocol>(config);
}

}  // namespace braid::device
