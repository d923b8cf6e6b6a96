// Single copy (single_copy.h): the CMA probe and reads, and the huge-page
// scan behind the default rule for which messages go single-copy.
#include "transports/shm/single_copy.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace braid::transport::shm {
namespace {

constexpr uint64_t kProbeMagic = 0x6272642d70726f62;  // "brd-prob"

bool cmaForcedOff() {
  const char* value = std::getenv("BRAID_SHM_TEST_NO_CMA");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

// One process_vm_readv call; returns bytes read or -1 with errno set.
ssize_t readOnce(int pid, uint64_t address, void* dst, size_t bytes) {
  iovec local{dst, bytes};
  iovec remote{reinterpret_cast<void*>(address), bytes};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

// The PAGEMAP_SCAN ioctl (Linux 6.7, include/uapi/linux/fs.h). Debian 12's
// kernel headers predate it, so the ABI (fixed by the kernel) is spelled out.
struct PageRegion {
  uint64_t start, end, categories;
};
struct PageScanArg {
  uint64_t size, flags, start, end, walkEnd, vec, vecLen, maxPages;
  uint64_t categoryInverted, categoryMask, categoryAnyofMask, returnMask;
};
constexpr unsigned long kPagemapScan = _IOWR('f', 16, PageScanArg);
constexpr uint64_t kPageIsHuge = 1 << 6;
// Regions asked for per call; a huge-page buffer is one or a few regions.
constexpr size_t kScanRegions = 16;

// Set once the kernel turned out not to have PAGEMAP_SCAN (or no pagemap):
// nothing is asked any more.
std::atomic<bool> gScanUnsupported{false};

}  // namespace

HugePageScanner::~HugePageScanner() {
  if (fd_ >= 0) close(fd_);
}

size_t HugePageScanner::hugeBytes(const void* address, size_t bytes) {
  if (bytes == 0 || gScanUnsupported.load(std::memory_order_relaxed)) return 0;
  if (pid_ != getpid()) {  // first use, or a forked child holding its parent's descriptor
    if (fd_ >= 0) close(fd_);
    fd_ = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    pid_ = getpid();
  }
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t begin = reinterpret_cast<uint64_t>(address), end = begin + bytes;
  PageRegion regions[kScanRegions];
  PageScanArg arg{};
  arg.size = sizeof(arg);
  arg.start = begin & ~(page - 1);
  arg.end = (end + page - 1) & ~(page - 1);
  arg.vec = reinterpret_cast<uint64_t>(regions);
  arg.vecLen = kScanRegions;
  arg.categoryMask = kPageIsHuge;  // report huge pages only
  arg.returnMask = kPageIsHuge;
  long found = fd_ < 0 ? -1 : ioctl(fd_, kPagemapScan, &arg);
  // No pagemap, ENOTTY (Linux < 6.7) or EINVAL (no PAGE_IS_HUGE): stop asking.
  if (fd_ < 0 || (found < 0 && (errno == ENOTTY || errno == EINVAL))) {
    gScanUnsupported.store(true, std::memory_order_relaxed);
  }
  // Huge pages past walkEnd (when the vector filled up) count as not huge.
  size_t huge = 0;
  for (long i = 0; i < found; ++i) {
    uint64_t from = std::max(regions[i].start, begin), to = std::min(regions[i].end, end);
    if (to > from) huge += to - from;
  }
  return huge;
}

bool HugePageScanner::mostlyHuge(const void* address, size_t bytes) {
  return bytes != 0 && hugeBytes(address, bytes) >= bytes - bytes / 4;
}

size_t hugePageBytes(const void* address, size_t bytes) {
  return HugePageScanner().hugeBytes(address, bytes);
}

bool hugePageScanAvailable() {
  uint64_t probe = 0;
  (void)hugePageBytes(&probe, sizeof(probe));
  return !gScanUnsupported.load(std::memory_order_relaxed);
}

bool mostlyInHugePages(const void* address, size_t bytes) {
  return HugePageScanner().mostlyHuge(address, bytes);
}

void fillProbePattern(uint64_t pattern[2], int pid, int rank) {
  pattern[0] = kProbeMagic ^ static_cast<uint64_t>(static_cast<uint32_t>(pid));
  pattern[1] = ~kProbeMagic ^ static_cast<uint64_t>(static_cast<uint32_t>(rank));
}

bool canReadPeer(const ProbeTarget& target) {
  if (cmaForcedOff()) return false;
  if (target.pid == getpid()) return true;
  uint64_t expected[2], got[2] = {0, 0};
  fillProbePattern(expected, target.pid, target.rank);
  if (readOnce(target.pid, target.address, got, sizeof(got)) != sizeof(got)) return false;
  return std::memcmp(expected, got, sizeof(got)) == 0;
}

Status readPeerMemory(const PeerMemory& peer, uint64_t address, void* dst, size_t bytes) {
  if (peer.sameProcess) {
    std::memcpy(dst, reinterpret_cast<const void*>(address), bytes);
    return Status::ok();
  }
  auto* out = static_cast<uint8_t*>(dst);
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = readOnce(peer.pid, address + done, out + done, bytes - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    int error = n < 0 ? errno : EFAULT;  // 0 bytes read: the range is not mapped
    std::string who =
        "rank " + std::to_string(peer.rank) + " (pid " + std::to_string(peer.pid) + ")";
    if (error == ESRCH) {
      return remoteError("shm: " + who + " died during a single-copy transfer", peer.rank);
    }
    return remoteError("shm: single-copy read of " + std::to_string(bytes) + " bytes from " + who +
                           " failed: " + std::strerror(error),
                       peer.rank);
  }
  return Status::ok();
}

size_t blockSingleCopyExtentBelow(size_t singleCopyBytes, int localRanks, int cpus,
                                  size_t streamStoreBytes) {
  if (singleCopyBytes != Config::kAutoBytes || cpus <= 0 || localRanks <= cpus) return 0;
  return streamStoreBytes;
}

int hostCpuCount(int hostCpus) {
  const char* forced = std::getenv("BRAID_SHM_TEST_CPUS");
  if (forced != nullptr && std::atoi(forced) > 0) return std::atoi(forced);
  if (hostCpus > 0) return hostCpus;
  return static_cast<int>(std::max(sysconf(_SC_NPROCESSORS_ONLN), 1L));
}

}  // namespace braid::transport::shm
