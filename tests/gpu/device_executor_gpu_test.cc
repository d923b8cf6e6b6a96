// The device executor kernel on a real GPU: n ranks sharing one device, launched together
// (one kernel, grid = channels x ranks), FIFOs in device memory. Every collective the CPU
// test covers (tests/unit/device_executor_test.cc), for every type and op at assorted
// sizes, compared with the float64 reference. Skips without a CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "collectives/device/launch.h"
#include "collectives/device/plan_builder.h"
#include "collectives/select.h"
#include "cuda_device.h"  // this folder
#include "support/element_bits.h"
#include "support/input_pattern.h"
#include "support/reference.h"

namespace braid::device {
namespace {

using coll::CollArgs;
using coll::CollKind;

#define CUDA_OK(x) ASSERT_EQ((x), cudaSuccess) << #x

template <class T>
T* deviceCopy(const std::vector<T>& v, std::vector<void*>* owned) {
  void* p = nullptr;
  if (cudaMalloc(&p, v.size() * sizeof(T) + 16) != cudaSuccess) return nullptr;
  cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
  owned->push_back(p);
  return static_cast<T*>(p);
}

// Runs `base` for base.nranks ranks in one launch; returns each rank's receive buffer.
template <class P>
void runOnGpu(const CollArgs& base, Protocol protocol, int channels,
              const testing::InputPattern& pattern, std::vector<std::vector<uint8_t>>* out,
              const std::string& algorithm = "") {
  const int n = base.nranks;
  const size_t elem = testing::elementBytes(base.type);
  constexpr uint32_t kSlots = 8, kSlotBytes = 4096;
  std::vector<void*> owned;
  // FIFOs [channel][from][to]: counters + slots, zeroed.
  const size_t fifos = size_t(channels) * n * n;
  FifoCounters* counters = nullptr;
  uint8_t* slots = nullptr;
  CUDA_OK(cudaMalloc(&counters, fifos * sizeof(FifoCounters)));
  CUDA_OK(cudaMalloc(&slots, fifos * kSlots * kSlotBytes));
  owned.push_back(counters);
  owned.push_back(slots);
  CUDA_OK(cudaMemset(counters, 0, fifos * sizeof(FifoCounters)));
  CUDA_OK(cudaMemset(slots, 0, fifos * kSlots * kSlotBytes));
  auto fifo = [&](int from, int to, int ch) {
    const size_t f = (size_t(ch) * n + from) * n + to;
    return FifoMemory{counters + f, slots + f * kSlots * kSlotBytes, kSlots, kSlotBytes};
  };
  std::vector<RankLaunch> launches(n);
  std::vector<uint8_t*> recvDev(n);
  std::vector<size_t> recvBytes(n);
  for (int r = 0; r < n; ++r) {
    CollArgs args = base;
    args.rank = r;
    args.chunkBytes = size_t(1) << 40;  // one chunk per round: the FIFO slots pipeline
    Result<coll::Schedule> schedule = coll::buildSchedule(args, algorithm);
    ASSERT_TRUE(schedule.isOk()) << schedule.status().message();
    PlanBufferSizes sizes{coll::sendBufferBytes(args), coll::recvBufferBytes(args),
                          schedule->scratchBytes, false};
    Result<DevicePlan> plan = buildDevicePlan(*schedule, sizes, elem, true);
    ASSERT_TRUE(plan.isOk()) << plan.status().message();
    std::vector<uint8_t> send(sizes.sendBytes + 1);
    pattern.fill(r, 0, sizes.sendBytes / elem, send.data());
    std::vector<typename P::SendEnd> sends;
    std::vector<typename P::RecvEnd> recvs;
    for (int c = 0; c < channels; ++c) {
      for (int p = 0; p < n; ++p) {
        sends.emplace_back(fifo(r, p, c));
        recvs.emplace_back(fifo(p, r, c));
      }
    }
    ExecArgs& e = launches[r].exec;
    e.plan = PlanView{deviceCopy(plan->ops, &owned), deviceCopy(plan->stepStarts, &owned),
                      uint32_t(plan->stepStarts.size() - 1)};
    e.send = deviceCopy(send, &owned);
    recvBytes[r] = sizes.recvBytes;
    recvDev[r] = deviceCopy(std::vector<uint8_t>(sizes.recvBytes + 1, 0xee), &owned);
    e.recv = recvDev[r];
    e.scratch = deviceCopy(std::vector<uint8_t>(sizes.scratchBytes + 1), &owned);
    e.op = args.op;
    e.nranks = n;
    e.channels = plan->splittable ? channels : 1;
    e.spinLimit = uint64_t(1) << 24;  // ~1.6 s of 64-ns naps without progress: a stall
    ASSERT_EQ(e.channels, channels) << "plan not splittable";
    launches[r].sendEnds = deviceCopy(sends, &owned);
    launches[r].recvEnds = deviceCopy(recvs, &owned);
  }
  LaunchConfig config;
  config.ranks = deviceCopy(launches, &owned);
  config.rankCount = n;
  config.channels = channels;
  config.type = base.type;
  config.protocol = protocol;
  config.status = deviceCopy(std::vector<int>(1, 0), &owned);
  ASSERT_EQ(launchPlanKernel(config), 0);
  CUDA_OK(cudaDeviceSynchronize());
  int status = -1;
  CUDA_OK(cudaMemcpy(&status, config.status, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(status, kExecOk);
  out->assign(n, {});
  for (int r = 0; r < n; ++r) {
    (*out)[r].resize(recvBytes[r]);
    CUDA_OK(cudaMemcpy((*out)[r].data(), recvDev[r], recvBytes[r], cudaMemcpyDeviceToHost));
  }
  for (void* p : owned) cudaFree(p);
}

// `algorithm` "" is the default (ring); other algorithms run on one channel, since not every
// plan splits across channels.
void checkAllReduce(braidDataType_t type, braidRedOp_t op, int n, size_t count, Protocol proto,
                    const std::string& algorithm = "") {
  CollArgs args;
  args.type = type;
  args.op = op;
  args.nranks = n;
  args.count = count;
  const testing::InputPattern pattern(type, op, 17);
  std::vector<std::vector<uint8_t>> recvs;
  if (proto == Protocol::kLl) {
    runOnGpu<LlProtocol>(args, proto, 1, pattern, &recvs, algorithm);
  } else {
    runOnGpu<SimpleProtocol>(args, proto, algorithm.empty() ? 2 : 1, pattern, &recvs, algorithm);
  }
  const auto source = testing::sourceFromPattern(pattern);
  for (int r = 0; r < n && r < int(recvs.size()); ++r) {
    ASSERT_EQ(testing::checkReduced(type, op, n, recvs[r].data(), count, source, 0), "")
        << testing::typeLabel(type) << " " << testing::opLabel(op) << " n=" << n
        << " count=" << count << " rank " << r << " algorithm '" << algorithm << "'";
  }
}

// BRAID_GPU_TEST_QUICK=1 (the GPU kit's compute-sanitizer runs, where every access is
// instrumented): 2 ranks, a few types and ops, small sizes.
bool quick() {
  const char* v = std::getenv("BRAID_GPU_TEST_QUICK");
  return v != nullptr && std::string(v) == "1";
}

TEST(DeviceExecutorGpu, AllReduceEveryTypeOpAndSize) {
  if (!testing::haveCudaDevice()) GTEST_SKIP() << "no CUDA device";
  if (quick()) {
    for (braidDataType_t t : {braidFloat32, braidBfloat16, braidInt8}) {
      for (braidRedOp_t op : {braidSum, braidMax}) {
        checkAllReduce(t, op, 2, 1000, Protocol::kSimple);
        checkAllReduce(t, op, 2, 99, Protocol::kLl);
      }
    }
    return;
  }
  for (int n : {2, 3, 4, 8}) {
    for (int t = 0; t < braidNumTypes; ++t) {
      for (int op = 0; op < braidNumOps; ++op) {
        for (size_t count : {size_t(1), size_t(1000), size_t(1) << 20}) {
          checkAllReduce(braidDataType_t(t), braidRedOp_t(op), n, count, Protocol::kSimple);
        }
        checkAllReduce(braidDataType_t(t), braidRedOp_t(op), n, 999, Protocol::kLl);
      }
    }
  }
}

// Every all-reduce algorithm's schedule (ring, tree, recursive doubling, ...) through the
// kernel on both protocols, as the CPU test runs them (tests/unit/device_executor_test.cc).
TEST(DeviceExecutorGpu, EveryAllReduceAlgorithmAndProtocol) {
  if (!testing::haveCudaDevice()) GTEST_SKIP() << "no CUDA device";
  const std::vector<int> ranks = quick() ? std::vector<int>{2} : std::vector<int>{2, 3, 4, 8};
  const std::vector<size_t> counts =
      quick() ? std::vector<size_t>{333} : std::vector<size_t>{1, 333, size_t(1) << 20};
  for (const std::string& algo : coll::algorithmNames(CollKind::kAllReduce)) {
    for (int n : ranks) {
      for (size_t count : counts) {
        checkAllReduce(braidFloat32, braidSum, n, count, Protocol::kSimple, algo);
        checkAllReduce(braidBfloat16, braidAvg, n, count, Protocol::kLl, algo);
      }
    }
  }
}

}  // namespace
}  // namespace braid::device
