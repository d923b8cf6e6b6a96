// GPUDirect RDMA registration and the choice of path (see gdr.h).
#include "transports/ibverbs/gdr.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/log.h"

namespace braid::transport::ib {
namespace {

constexpr int kDmaBufFdHandle = 1;  // CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD
constexpr uintptr_t kHostPage = 4096;

bool exists(const char* path) { return std::ifstream(path).good(); }

}  // namespace

const char* gdrPathName(GdrPath path) {
  switch (path) {
    case GdrPath::kUnprobed:
      return "not probed";
    case GdrPath::kDmaBuf:
      return "dma-buf";
    case GdrPath::kPeerMemory:
      return "peer memory";
    case GdrPath::kHostStaging:
      return "host staging";
  }
  return "?";
}

const CudaDmaBufApi* cudaDmaBufApi() {
  static const CudaDmaBufApi* api = []() -> const CudaDmaBufApi* {
    // Only a driver the application already loaded: CPU programs never load CUDA.
    void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (driver == nullptr) return nullptr;
    static CudaDmaBufApi a;
    a.getHandleForAddressRange = reinterpret_cast<decltype(a.getHandleForAddressRange)>(
        ::dlsym(driver, "cuMemGetHandleForAddressRange"));
    return a.getHandleForAddressRange != nullptr ? &a : nullptr;
  }();
  return api;
}

bool peerMemoryLoaded() {
  return exists("/sys/kernel/mm/memory_peers/nv_mem/version") ||
         exists("/sys/module/nvidia_peermem/version") || exists("/sys/module/nv_peer_mem/version");
}

GdrRegistrar::GdrRegistrar(const VerbsApi& api, ibv_pd* pd, int access, bool enabled,
                           const CudaDmaBufApi* cuda, bool peerMemory)
    : api_(api),
      pd_(pd),
      access_(access),
      enabled_(enabled),
      cuda_(cuda),
      peerMemory_(peerMemory) {}

Result<ibv_mr*> GdrRegistrar::viaDmaBuf(void* ptr, size_t bytes) {
  if (api_.regDmabufMr == nullptr) {
    return invalidUsage("libibverbs has no ibv_reg_dmabuf_mr (rdma-core older than 34)");
  }
  if (cuda_ == nullptr) {
    return invalidUsage("the CUDA driver cannot export dma-bufs (not loaded, or older than 11.7)");
  }
  // The export takes host-page-aligned ranges; the MR then starts at ptr's offset in it.
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  const uintptr_t base = p & ~(kHostPage - 1);
  const size_t span = ((p + bytes + kHostPage - 1) & ~(kHostPage - 1)) - base;
  int fd = -1;
  if (int r = cuda_->getHandleForAddressRange(&fd, base, span, kDmaBufFdHandle, 0); r != 0) {
    return invalidUsage("cuMemGetHandleForAddressRange failed (CUresult " + std::to_string(r) +
                        ")");
  }
  ibv_mr* mr = api_.regDmabufMr(pd_, p - base, bytes, p, fd, access_);
  const int err = errno;
  ::close(fd);  // the registration holds its own reference to the dma-buf
  if (mr == nullptr) return systemError("ibv_reg_dmabuf_mr", err);
  return mr;
}

Result<ibv_mr*> GdrRegistrar::viaPeerMemory(void* ptr, size_t bytes) {
  if (!peerMemory_) return invalidUsage("nvidia-peermem is not loaded");
  ibv_mr* mr = api_.regMr(pd_, ptr, bytes, access_);
  if (mr == nullptr) return systemError("ibv_reg_mr of device memory", errno);
  return mr;
}

Result<ibv_mr*> GdrRegistrar::registerDevice(void* ptr, size_t bytes) {
  switch (path_) {
    case GdrPath::kDmaBuf:
      return viaDmaBuf(ptr, bytes);
    case GdrPath::kPeerMemory:
      return viaPeerMemory(ptr, bytes);
    case GdrPath::kHostStaging:
      return static_cast<ibv_mr*>(nullptr);
    case GdrPath::kUnprobed:
      break;
  }
  // The first device buffer decides.
  if (!enabled_) {
    path_ = GdrPath::kHostStaging;
    reason_ = "BRAID_GDR=0";
  } else {
    Result<ibv_mr*> mr = viaDmaBuf(ptr, bytes);
    if (mr.isOk()) {
      path_ = GdrPath::kDmaBuf;
      reason_ = "ibv_reg_dmabuf_mr registered a CUDA dma-buf";
    } else {
      reason_ = "dma-buf: " + mr.status().message();
      mr = viaPeerMemory(ptr, bytes);
      if (mr.isOk()) {
        path_ = GdrPath::kPeerMemory;
        reason_ += "; peer memory: ibv_reg_mr took the device pointer";
      } else {
        path_ = GdrPath::kHostStaging;
        reason_ += "; peer memory: " + mr.status().message();
      }
    }
    if (mr.isOk()) {
      logf(LogLevel::kInfo, "ib: GPUDirect RDMA via %s (%s)", gdrPathName(path_), reason_.c_str());
      return mr;
    }
  }
  logf(LogLevel::kInfo, "ib: GPUDirect RDMA off, device buffers staged through host memory (%s)",
       reason_.c_str());
  return static_cast<ibv_mr*>(nullptr);
}

}  // namespace braid::transport::ib
