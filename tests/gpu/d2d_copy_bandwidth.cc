// The floor braid-perf --memory device is set against: how fast this GPU copies device
// memory to device memory (cudaMemcpyAsync, one stream), from 8 B to 1 GiB by powers of 2.
//
//   d2d_copy_bandwidth [max bytes, default 1G] [iterations per sample, default 20]
//
// Per size: two untimed copies, then 5 samples of `iterations` back-to-back copies timed
// with CUDA events; the table shows the median sample's time per copy and bandwidth
// (GB/s = 1e9 bytes/s of bytes copied; the memory moves twice that, one read and one write).
// Small sizes show the launch/issue latency of one copy, large ones the HBM copy rate: a
// single-GPU collective that moves S bytes through memory k times cannot beat k copies.
// Exits 77 (ctest: skipped) when no GPU is usable, 1 on a CUDA error.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr int kSkipped = 77;
constexpr int kSamples = 5;

bool ok(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return true;
  std::fprintf(stderr, "d2d_copy_bandwidth: %s: %s\n", what, cudaGetErrorString(error));
  return false;
}

// "1G", "64M", "8K" or a plain number of bytes; 0 when unreadable.
size_t parseBytes(const char* text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  const std::string suffix = end ? end : "";
  if (suffix.empty()) return value;
  if (suffix == "K") return value << 10;
  if (suffix == "M") return value << 20;
  if (suffix == "G") return value << 30;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t maxBytes = argc > 1 ? parseBytes(argv[1]) : size_t(1) << 30;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 20;
  if (maxBytes < 8 || iterations < 1) {
    std::fprintf(stderr, "usage: d2d_copy_bandwidth [max bytes >= 8, e.g. 1G] [iterations]\n");
    return 2;
  }
  int count = 0;
  const cudaError_t probe = cudaGetDeviceCount(&count);
  if (probe != cudaSuccess || count == 0) {
    std::printf("skipped: no usable CUDA device (%s)\n",
                probe != cudaSuccess ? cudaGetErrorString(probe) : "none found");
    return kSkipped;
  }
  cudaDeviceProp prop{};
  if (!ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties")) return 1;
  void* src = nullptr;
  void* dst = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t begin = nullptr, end = nullptr;
  if (!ok(cudaMalloc(&src, maxBytes), "cudaMalloc") ||
      !ok(cudaMalloc(&dst, maxBytes), "cudaMalloc") ||
      !ok(cudaMemset(src, 1, maxBytes), "cudaMemset") ||
      !ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate") ||
      !ok(cudaEventCreate(&begin), "cudaEventCreate") ||
      !ok(cudaEventCreate(&end), "cudaEventCreate")) {
    return 1;
  }
  std::printf(
      "# device 0: %s, %d SMs; cudaMemcpyAsync device-to-device, median of %d samples "
      "of %d copies\n",
      prop.name, prop.multiProcessorCount, kSamples, iterations);
  std::printf("# %12s %12s %10s\n", "bytes", "time(us)", "GB/s");
  for (size_t bytes = 8; bytes <= maxBytes; bytes *= 2) {
    for (int i = 0; i < 2; ++i) {
      if (!ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream), "copy")) return 1;
    }
    std::vector<float> samples;
    for (int s = 0; s < kSamples; ++s) {
      if (!ok(cudaEventRecord(begin, stream), "cudaEventRecord")) return 1;
      for (int i = 0; i < iterations; ++i) {
        if (!ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream), "copy")) {
          return 1;
        }
      }
      float ms = 0;
      if (!ok(cudaEventRecord(end, stream), "cudaEventRecord") ||
          !ok(cudaEventSynchronize(end), "cudaEventSynchronize") ||
          !ok(cudaEventElapsedTime(&ms, begin, end), "cudaEventElapsedTime")) {
        return 1;
      }
      samples.push_back(ms);
    }
    std::sort(samples.begin(), samples.end());
    const double seconds = double(samples[kSamples / 2]) * 1e-3 / iterations;
    std::printf("  %12zu %12.2f %10.2f\n", bytes, seconds * 1e6, double(bytes) / seconds / 1e9);
    if (bytes > maxBytes / 2) break;  // no overflow past the largest size
  }
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  cudaStreamDestroy(stream);
  cudaFree(src);
  cudaFree(dst);
  return 0;
}
