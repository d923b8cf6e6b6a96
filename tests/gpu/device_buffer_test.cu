// Device buffers on a host communicator (no device group) go through its host proxy
// (src/comm/device_proxy/); a host buffer paired with a device buffer is refused with
// braidInvalidUsage and a clear message — never dereferenced on the host, never a silent
// wrong answer. Skips without a CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "braid.h"
#include "cuda_device.h"  // this folder

namespace {

TEST(DeviceBuffers, GoThroughTheProxyAndMixedBuffersAreRefused) {
  if (!braid::testing::haveCudaDevice()) GTEST_SKIP() << "no CUDA device";
  float* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 1024 * sizeof(float)), cudaSuccess);
  braidComm_t comm;
  ASSERT_EQ(braidCommInitAll(&comm, 1, nullptr), braidSuccess);
  std::vector<float> host(1024, 1.0f);
  for (int i = 0; i < 1024; ++i) host[i] = float(i);
  ASSERT_EQ(cudaMemcpy(device, host.data(), 1024 * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);

  // One rank: the sum is the input, copied out to staging and back by the proxy.
  EXPECT_EQ(braidAllReduce(device, device, 1024, braidFloat32, braidSum, comm, nullptr),
            braidSuccess)
      << braidGetLastError(comm);
  EXPECT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  std::vector<float> back(1024, -1.0f);
  ASSERT_EQ(cudaMemcpy(back.data(), device, 1024 * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(back, host);
  for (int i = 0; i < 1024; ++i) host[i] = 1.0f;

  EXPECT_EQ(braidAllReduce(host.data(), device, 1024, braidFloat32, braidSum, comm, nullptr),
            braidInvalidUsage);
  EXPECT_NE(std::string(braidGetLastError(comm)).find("device memory"), std::string::npos)
      << braidGetLastError(comm);
  // Host buffers keep working, and managed memory is host-readable.
  EXPECT_EQ(braidAllReduce(host.data(), host.data(), 1024, braidFloat32, braidSum, comm, nullptr),
            braidSuccess);
  float* managed = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, 1024 * sizeof(float)), cudaSuccess);
  for (int i = 0; i < 1024; ++i) managed[i] = 2.0f;
  EXPECT_EQ(braidAllReduce(managed, managed, 1024, braidFloat32, braidSum, comm, nullptr),
            braidSuccess)
      << braidGetLastError(comm);
  EXPECT_EQ(managed[0], 2.0f);  // one rank: sum is the input

  braidCommDestroy(comm);
  cudaFree(managed);
  cudaFree(device);
}

TEST(DeviceBuffers, AStreamIsRefused) {
  braidComm_t comm;
  ASSERT_EQ(braidCommInitAll(&comm, 1, nullptr), braidSuccess);
  float x = 1;
  int fakeStream = 0;
  EXPECT_EQ(braidAllReduce(&x, &x, 1, braidFloat32, braidSum, comm, &fakeStream),
            braidInvalidUsage);
  braidCommDestroy(comm);
}

}  // namespace
