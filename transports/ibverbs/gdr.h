// GPUDirect RDMA: registering CUDA device memory with the RDMA device, so
// that the NIC reads and writes GPU memory without a copy through the host.
//
// Paths, in order of preference, chosen by probing the first device buffer
// (the first that registers is kept for later buffers):
//   dma-buf      the CUDA driver exports the allocation as a dma-buf
//                (cuMemGetHandleForAddressRange) and ibv_reg_dmabuf_mr
//                registers it: upstream kernels (5.12+), rdma-core 34+;
//   peer memory  ibv_reg_mr on the device pointer itself, which works when
//                the nvidia-peermem module is loaded;
//   host staging neither works, or BRAID_GDR=0: device buffers go through
//                host memory (the device proxy), as without RDMA.
// The choice is logged at INFO with the reason. After the NIC writes GPU memory,
// a kernel may only read it once the writes are visible to the GPU; with
// GPUDirect the receiver therefore issues a flush (needsFlush) before it hands
// the data to a kernel.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <string>

#include "core/status.h"
#include "transports/ibverbs/verbs_api.h"

namespace braid::transport::ib {

enum class GdrPath { kUnprobed, kDmaBuf, kPeerMemory, kHostStaging };
const char* gdrPathName(GdrPath path);

/// The CUDA driver entry point dma-buf export needs (a fake in tests).
struct CudaDmaBufApi {
  // cuMemGetHandleForAddressRange(handle, ptr, size, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, flags):
  // 0 (CUDA_SUCCESS) and a dma-buf descriptor in *fd, or a CUresult.
  int (*getHandleForAddressRange)(void* fd, unsigned long long ptr, size_t size, int type,
                                  unsigned long long flags) = nullptr;
};

/// The driver's entry point when the process has loaded libcuda.so.1 and it is new
/// enough (CUDA 11.7+); null otherwise.
const CudaDmaBufApi* cudaDmaBufApi();

/// Whether nvidia-peermem (or the older nv_peer_mem) is loaded.
bool peerMemoryLoaded();

class GdrRegistrar {
 public:
  /// `enabled`: BRAID_GDR. `cuda`: null when the driver cannot export dma-bufs.
  /// `peerMemory`: peerMemoryLoaded(). `pd` is the transport's, and outlives this.
  GdrRegistrar(const VerbsApi& api, ibv_pd* pd, int access, bool enabled, const CudaDmaBufApi* cuda,
               bool peerMemory);

  /// Registers device memory [ptr, ptr + bytes). Null (not an error) when the path is
  /// host staging; an error when a path that worked before fails now.
  Result<ibv_mr*> registerDevice(void* ptr, size_t bytes);

  GdrPath path() const { return path_; }
  /// Why the path was chosen (which probes failed and how), for the log.
  const std::string& reason() const { return reason_; }
  /// True when data RDMA-written into device memory needs a flush before a kernel reads it.
  bool needsFlush() const { return path_ == GdrPath::kDmaBuf || path_ == GdrPath::kPeerMemory; }

 private:
  Result<ibv_mr*> viaDmaBuf(void* ptr, size_t bytes);
  Result<ibv_mr*> viaPeerMemory(void* ptr, size_t bytes);

  const VerbsApi& api_;
  ibv_pd* const pd_;
  const int access_;
  const bool enabled_;
  const CudaDmaBufApi* const cuda_;
  const bool peerMemory_;
  GdrPath path_ = GdrPath::kUnprobed;
  std::string reason_;
};

}  // namespace braid::transport::ib
