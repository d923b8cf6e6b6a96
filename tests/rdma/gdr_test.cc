// GPUDirect RDMA's choice of path (transports/ibverbs/gdr.h) against a fake verbs
// table and a fake CUDA driver: no GPU or RDMA device needed.
#include "transports/ibverbs/gdr.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>

namespace braid::transport::ib {
namespace {

struct Fakes {
  static inline int dmabufCalls = 0, regMrCalls = 0, exportCalls = 0;
  static inline bool dmabufWorks = true, regMrWorks = true, exportWorks = true;
  static inline uint64_t lastOffset = 0, lastIova = 0;
  static inline int lastFd = -1;
  static inline ibv_mr mr{};

  static ibv_mr* regDmabufMr(ibv_pd*, uint64_t offset, size_t, uint64_t iova, int fd, int) {
    ++dmabufCalls;
    lastOffset = offset;
    lastIova = iova;
    lastFd = fd;
    if (!dmabufWorks) errno = EOPNOTSUPP;
    return dmabufWorks ? &mr : nullptr;
  }
  static ibv_mr* regMr(ibv_pd*, void*, size_t, int) {
    ++regMrCalls;
    if (!regMrWorks) errno = EFAULT;
    return regMrWorks ? &mr : nullptr;
  }
  static int exportRange(void* fd, unsigned long long, size_t, int type, unsigned long long) {
    ++exportCalls;
    if (!exportWorks || type != 1) return 1;  // CUDA_ERROR_INVALID_VALUE
    *static_cast<int*>(fd) = ::dup(2);        // a real descriptor, to see it closed
    return 0;
  }
  static void reset() {
    dmabufCalls = regMrCalls = exportCalls = 0;
    dmabufWorks = regMrWorks = exportWorks = true;
    lastFd = -1;
  }
};

class GdrTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Fakes::reset();
    api_.regMr = &Fakes::regMr;
    api_.regDmabufMr = &Fakes::regDmabufMr;
    cuda_.getHandleForAddressRange = &Fakes::exportRange;
  }
  VerbsApi api_;
  CudaDmaBufApi cuda_;
  void* devicePtr_ = reinterpret_cast<void*>(0x7f0000001234);  // never dereferenced
};

TEST_F(GdrTest, PrefersDmaBufAndClosesTheDescriptor) {
  GdrRegistrar gdr(api_, nullptr, 0, true, &cuda_, true);
  auto mr = gdr.registerDevice(devicePtr_, 1 << 20);
  ASSERT_TRUE(mr.isOk());
  EXPECT_EQ(*mr, &Fakes::mr);
  EXPECT_EQ(gdr.path(), GdrPath::kDmaBuf);
  EXPECT_EQ(Fakes::lastOffset, 0x234u) << "offset of the pointer in its exported page";
  EXPECT_EQ(Fakes::lastIova, 0x7f0000001234u);
  EXPECT_EQ(::fcntl(Fakes::lastFd, F_GETFD), -1) << "the dma-buf descriptor must be closed";
  EXPECT_EQ(Fakes::regMrCalls, 0);
  EXPECT_TRUE(gdr.needsFlush());
}

TEST_F(GdrTest, FallsBackToPeerMemoryWhenLibibverbsIsOld) {
  api_.regDmabufMr = nullptr;
  GdrRegistrar gdr(api_, nullptr, 0, true, &cuda_, true);
  auto mr = gdr.registerDevice(devicePtr_, 4096);
  ASSERT_TRUE(mr.isOk());
  EXPECT_EQ(gdr.path(), GdrPath::kPeerMemory);
  EXPECT_NE(gdr.reason().find("rdma-core older than 34"), std::string::npos) << gdr.reason();
}

TEST_F(GdrTest, FallsBackToPeerMemoryWhenTheDriverCannotExport) {
  Fakes::exportWorks = false;
  GdrRegistrar gdr(api_, nullptr, 0, true, &cuda_, true);
  ASSERT_TRUE(gdr.registerDevice(devicePtr_, 4096).isOk());
  EXPECT_EQ(gdr.path(), GdrPath::kPeerMemory);
  EXPECT_EQ(Fakes::dmabufCalls, 0);
  EXPECT_NE(gdr.reason().find("cuMemGetHandleForAddressRange"), std::string::npos);
}

TEST_F(GdrTest, StagesThroughTheHostWhenNothingRegisters) {
  Fakes::dmabufWorks = false;
  GdrRegistrar gdr(api_, nullptr, 0, true, &cuda_, /*peerMemory=*/false);
  auto mr = gdr.registerDevice(devicePtr_, 4096);
  ASSERT_TRUE(mr.isOk());
  EXPECT_EQ(*mr, nullptr);
  EXPECT_EQ(gdr.path(), GdrPath::kHostStaging);
  EXPECT_FALSE(gdr.needsFlush());
  EXPECT_NE(gdr.reason().find("ibv_reg_dmabuf_mr"), std::string::npos) << gdr.reason();
  EXPECT_NE(gdr.reason().find("nvidia-peermem is not loaded"), std::string::npos);
  EXPECT_EQ(Fakes::regMrCalls, 0) << "ibv_reg_mr of a device pointer without peer memory";
}

TEST_F(GdrTest, PeerMemoryLoadedButRefusedStagesThroughTheHost) {
  Fakes::dmabufWorks = false;
  Fakes::regMrWorks = false;
  GdrRegistrar gdr(api_, nullptr, 0, true, &cuda_, true);
  auto mr = gdr.registerDevice(devicePtr_, 4096);
  ASSERT_TRUE(mr.isOk());
  EXPECT_EQ(*mr, nullptr);
  EXPECT_EQ(gdr.path(), GdrPath::kHostStaging);
  EXPECT_EQ(Fakes::regMrCalls, 1);
}

TEST_F(GdrTest, DisabledNeverTouchesTheDevice) {
  GdrRegistrar gdr(api_, nullptr, 0, /*enabled=*/false, &cuda_, true);
  auto mr = gdr.registerDevice(devicePtr_, 4096);
  ASSERT_TRUE(mr.isOk());
  EXPECT_EQ(*mr, nullptr);
  EXPECT_EQ(gdr.path(), GdrPath::kHostStaging);
  EXPECT_EQ(gdr.reason(), "BRAID_GDR=0");
  EXPECT_EQ(Fakes::dmabufCalls + Fakes::regMrCalls + Fakes::exportCalls, 0);
}

TEST_F(GdrTest, ThePathChosenFirstIsKeptAndItsFailuresAreErrors) {
  GdrRegistrar gdr(api_, nullptr, 0, true, &cuda_, true);
  ASSERT_TRUE(gdr.registerDevice(devicePtr_, 4096).isOk());
  Fakes::dmabufWorks = false;
  auto mr = gdr.registerDevice(devicePtr_, 4096);
  EXPECT_FALSE(mr.isOk()) << "a path that worked must not silently change";
  EXPECT_EQ(gdr.path(), GdrPath::kDmaBuf);
  EXPECT_EQ(Fakes::regMrCalls, 0);
}

}  // namespace
}  // namespace braid::transport::ib
