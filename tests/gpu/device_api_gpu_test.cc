// The C API with device buffers: braidCommInitAll with every rank on one GPU (devlist all
// 0), each rank's collective enqueued on its own stream, results checked against the float64
// reference. Without a device, InitAll with a devlist must fail cleanly instead.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "braid.h"
#include "cuda_device.h"  // this folder
#include "support/element_bits.h"
#include "support/input_pattern.h"
#include "support/reference.h"

namespace {

TEST(DeviceApi, InitAllWithADevlistFailsCleanlyWithoutADevice) {
  if (braid::testing::haveCudaDevice()) GTEST_SKIP() << "a CUDA device is present";
  braidComm_t comms[2] = {nullptr, nullptr};
  const int devlist[2] = {0, 0};
  EXPECT_NE(braidCommInitAll(comms, 2, devlist), braidSuccess);
  EXPECT_EQ(comms[0], nullptr);
  EXPECT_FALSE(std::string(braidGetLastError(nullptr)).empty());
}

TEST(DeviceApi, AllReduceOnRanksSharingOneGpu) {
  if (!braid::testing::haveCudaDevice()) GTEST_SKIP() << "no CUDA device";
  for (int n : {2, 4}) {
    std::vector<braidComm_t> comms(n);
    const std::vector<int> devlist(n, 0);
    ASSERT_EQ(braidCommInitAll(comms.data(), n, devlist.data()), braidSuccess)
        << braidGetLastError(nullptr);
    for (braidDataType_t type : {braidFloat32, braidBfloat16, braidInt32}) {
      for (size_t count : {size_t(1), size_t(100000)}) {
        const braidRedOp_t op = braidSum;
        const braid::testing::InputPattern pattern(type, op, 5);
        const size_t bytes = count * braid::testing::elementBytes(type);
        std::vector<void*> send(n), recv(n);
        std::vector<cudaStream_t> streams(n);
        for (int r = 0; r < n; ++r) {
          ASSERT_EQ(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking), cudaSuccess);
          ASSERT_EQ(cudaMalloc(&send[r], bytes), cudaSuccess);
          ASSERT_EQ(cudaMalloc(&recv[r], bytes), cudaSuccess);
          std::vector<uint8_t> host(bytes);
          pattern.fill(r, 0, count, host.data());
          ASSERT_EQ(cudaMemcpy(send[r], host.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
        }
        for (int r = 0; r < n; ++r) {
          ASSERT_EQ(braidAllReduce(send[r], recv[r], count, type, op, comms[r], streams[r]),
                    braidSuccess)
              << braidGetLastError(comms[r]);
        }
        const auto source = braid::testing::sourceFromPattern(pattern);
        for (int r = 0; r < n; ++r) {
          ASSERT_EQ(cudaStreamSynchronize(streams[r]), cudaSuccess);
          std::vector<uint8_t> got(bytes);
          ASSERT_EQ(cudaMemcpy(got.data(), recv[r], bytes, cudaMemcpyDeviceToHost), cudaSuccess);
          EXPECT_EQ(braid::testing::checkReduced(type, op, n, got.data(), count, source, 0), "")
              << braid::testing::typeLabel(type) << " n=" << n << " count=" << count << " rank "
              << r;
          cudaFree(send[r]);
          cudaFree(recv[r]);
          cudaStreamDestroy(streams[r]);
        }
      }
    }
    // A host buffer with a device buffer is refused, not dereferenced.
    float* device = nullptr;
    ASSERT_EQ(cudaMalloc(&device, 64 * sizeof(float)), cudaSuccess);
    std::vector<float> host(64, 1.0f);
    EXPECT_EQ(braidAllReduce(host.data(), device, 64, braidFloat32, braidSum, comms[0], nullptr),
              braidInvalidUsage);
    cudaFree(device);
    for (braidComm_t c : comms) braidCommDestroy(c);
  }
}

}  // namespace
