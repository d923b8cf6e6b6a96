// Several ranks on one GPU through SingleDeviceGroup (collectives/device/cuda/): each rank's
// call enqueues its kernel on its own stream and returns, as the C API will. Every
// collective x type x op at sizes from 0 to 4 Mi elements, in place and out of place, is
// compared with the float64 reference. Skips without a CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "collectives/device/cuda/single_device_group.h"
#include "cuda_device.h"  // this folder
#include "support/element_bits.h"
#include "support/input_pattern.h"
#include "support/reference.h"

namespace braid::device {
namespace {

using coll::CollArgs;
using coll::CollKind;

struct RankBuffers {
  void* send = nullptr;
  void* recv = nullptr;
  cudaStream_t stream = nullptr;
};

// Runs one collective on all ranks of `group`; returns each rank's receive buffer.
void run(SingleDeviceGroup& group, CollArgs base, const testing::InputPattern& pattern,
         std::vector<std::vector<uint8_t>>* out) {
  const int n = group.nranks();
  const size_t elem = testing::elementBytes(base.type);
  std::vector<RankBuffers> ranks(n);
  for (int r = 0; r < n; ++r) {
    CollArgs a = base;
    a.rank = r;
    const size_t sendBytes = coll::sendBufferBytes(a), recvBytes = coll::recvBufferBytes(a);
    ASSERT_EQ(cudaStreamCreateWithFlags(&ranks[r].stream, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&ranks[r].recv, recvBytes + 16), cudaSuccess);
    ASSERT_EQ(cudaMemset(ranks[r].recv, 0xee, recvBytes + 16), cudaSuccess);
    std::vector<uint8_t> send(sendBytes + 1);
    pattern.fill(r, 0, sendBytes / elem, send.data());
    if (base.inPlace) {
      ranks[r].send = ranks[r].recv;  // the in-place forms: send at the rank's own block
      if (base.kind == CollKind::kAllGather) {
        ranks[r].send = static_cast<uint8_t*>(ranks[r].recv) + r * sendBytes;
      }
    } else {
      ASSERT_EQ(cudaMalloc(&ranks[r].send, sendBytes + 16), cudaSuccess);
    }
    ASSERT_EQ(cudaMemcpy(ranks[r].send, send.data(), sendBytes, cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  for (int r = 0; r < n; ++r) {
    CollArgs a = base;
    a.rank = r;
    Status s = group.enqueue(a, ranks[r].send, ranks[r].recv, ranks[r].stream);
    ASSERT_TRUE(s.isOk()) << s.message();
  }
  out->assign(n, {});
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(cudaStreamSynchronize(ranks[r].stream), cudaSuccess);
    Status s = group.check(r);
    EXPECT_TRUE(s.isOk()) << s.message();
    CollArgs a = base;
    a.rank = r;
    (*out)[r].resize(coll::recvBufferBytes(a));
    ASSERT_EQ(cudaMemcpy((*out)[r].data(), ranks[r].recv, (*out)[r].size(), cudaMemcpyDeviceToHost),
              cudaSuccess);
  }
  for (auto& r : ranks) {
    if (r.send != r.recv && !base.inPlace) cudaFree(r.send);
    cudaFree(r.recv);
    cudaStreamDestroy(r.stream);
  }
}

std::string label(const CollArgs& a) {
  return std::string(coll::collName(a.kind)) + " " + testing::typeLabel(a.type) + " " +
         testing::opLabel(a.op) + " n=" + std::to_string(a.nranks) +
         " count=" + std::to_string(a.count) + (a.inPlace ? " in place" : "");
}

// Checks every rank's output of `a` (all-reduce, reduce-scatter, all-gather, broadcast).
void check(const CollArgs& a, const testing::InputPattern& pattern,
           const std::vector<std::vector<uint8_t>>& recvs) {
  const auto source = testing::sourceFromPattern(pattern);
  for (int r = 0; r < a.nranks; ++r) {
    const uint8_t* got = recvs[r].data();
    const size_t elem = testing::elementBytes(a.type);
    std::string err;
    switch (a.kind) {
      case CollKind::kAllReduce:
        err = testing::checkReduced(a.type, a.op, a.nranks, got, a.count, source, 0);
        break;
      case CollKind::kReduceScatter:
        err = testing::checkReduced(a.type, a.op, a.nranks, got, a.count, source, r * a.count);
        break;
      case CollKind::kBroadcast:
        err = testing::checkCopied(a.type, got, a.count, source, a.root, 0);
        break;
      case CollKind::kAllGather:
        for (int p = 0; p < a.nranks && err.empty(); ++p) {
          err = testing::checkCopied(a.type, got + p * a.count * elem, a.count, source, p, 0);
        }
        break;
      default:
        break;
    }
    ASSERT_EQ(err, "") << label(a) << " rank " << r;
  }
}

TEST(DeviceGroupGpu, EveryCollectiveTypeOpAndSize) {
  if (!testing::haveCudaDevice()) GTEST_SKIP() << "no CUDA device";
  for (int n : {2, 4, 8}) {
    DeviceGroupOptions options;
    options.spinLimit = uint64_t(1) << 24;  // a stall fails in seconds, not a minute
    auto group = SingleDeviceGroup::create(n, 0, options);
    ASSERT_TRUE(group.isOk()) << group.status().message();
    for (CollKind kind : {CollKind::kAllReduce, CollKind::kReduceScatter, CollKind::kAllGather,
                          CollKind::kBroadcast}) {
      for (int t = 0; t < braidNumTypes; ++t) {
        const bool reduces = kind == CollKind::kAllReduce || kind == CollKind::kReduceScatter;
        for (int op = 0; op < (reduces ? int(braidNumOps) : 1); ++op) {
          for (size_t count : {size_t(0), size_t(1), size_t(4097), size_t(1) << 22}) {
            // The large size (Simple protocol, 2 channels) for a few types: the host-side
            // reference check, not the GPU, is what takes time there.
            const bool fewTypes = t == braidInt8 || t == braidFloat32 || t == braidBfloat16;
            if (count > 4097 && !(fewTypes && op == braidSum)) continue;
            for (bool inPlace : {false, true}) {
              if (inPlace && kind == CollKind::kReduceScatter) continue;  // needs offset recv
              CollArgs a;
              a.kind = kind;
              a.type = braidDataType_t(t);
              a.op = braidRedOp_t(op);
              a.nranks = n;
              a.count = count;
              a.root = n - 1;
              a.inPlace = inPlace;
              const testing::InputPattern pattern =
                  reduces ? testing::InputPattern(a.type, a.op, 23)
                          : testing::InputPattern::forMove(a.type, 23);
              std::vector<std::vector<uint8_t>> recvs;
              run(**group, a, pattern, &recvs);
              if (HasFatalFailure()) return;
              check(a, pattern, recvs);
              if (HasFatalFailure()) return;
            }
          }
        }
      }
    }
  }
}

TEST(DeviceGroupGpu, RefusesARankOutsideTheGroup) {
  if (!testing::haveCudaDevice()) GTEST_SKIP() << "no CUDA device";
  auto group = SingleDeviceGroup::create(2, 0, DeviceGroupOptions{});
  ASSERT_TRUE(group.isOk()) << group.status().message();
  CollArgs a;
  a.nranks = 2;
  a.rank = 2;
  EXPECT_FALSE((*group)->enqueue(a, nullptr, nullptr, nullptr).isOk());
}

}  // namespace
}  // namespace braid::device
