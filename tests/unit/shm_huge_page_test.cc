// Tests of the default single-copy rule of the shm transport: a message of at
// least kAutoSingleCopyBytes goes single-copy only when its send buffer lies
// (>= 3/4) in huge pages, as hugePageBytes() reads them from PAGEMAP_SCAN.
//
// The independent reference is /proc/self/smaps: AnonHugePages of the mapping
// a test made. The kernel decides whether a MADV_HUGEPAGE mapping really gets
// huge pages (THP "never", fragmentation), so the positive cases skip when
// smaps says it did not, and the negative cases use MADV_NOHUGEPAGE, which
// always yields 4 KiB pages. Whether a send went single-copy is observed from
// its request before the receiver posts (as in shm_single_copy_test): a
// two-copy send has filled the 32 KiB FIFO, a single-copy one has sent nothing.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/config.h"
#include "support/local_bootstrap.h"
#include "support/spawn.h"
#include "transports/shm/shm_transport.h"
#include "transports/shm/single_copy.h"

namespace braid::transport {
namespace {

constexpr size_t kHuge = 2 << 20;  // x86-64 and arm64 (4 KiB base pages) PMD size

// An anonymous mapping of `bytes` starting on a 2 MiB boundary, advised and
// touched; its last `smallTail` bytes advised to keep 4 KiB pages.
class Mapping {
 public:
  Mapping(size_t bytes, int advice, size_t smallTail = 0) : bytes_(bytes) {
    raw_ = mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw_ == MAP_FAILED) return;
    auto aligned = (reinterpret_cast<uintptr_t>(raw_) + kHuge - 1) & ~(kHuge - 1);
    data_ = reinterpret_cast<uint8_t*>(aligned);
    madvise(data_, bytes, advice);
    if (smallTail != 0) madvise(data_ + bytes - smallTail, smallTail, MADV_NOHUGEPAGE);
    for (size_t i = 0; i < bytes; ++i) data_[i] = static_cast<uint8_t>(i * 7 + (i >> 12));
  }
  ~Mapping() {
    if (raw_ != MAP_FAILED) munmap(raw_, bytes_ + kHuge);
  }
  uint8_t* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* raw_ = MAP_FAILED;
  uint8_t* data_ = nullptr;
  size_t bytes_;
};

// Bytes of AnonHugePages /proc/self/smaps reports for the mappings inside
// [begin, begin + bytes) (the advice may have split one mapping into several).
size_t smapsHugeBytes(const void* begin, size_t bytes) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(begin), hi = lo + bytes;
  FILE* file = std::fopen("/proc/self/smaps", "r");
  if (file == nullptr) return 0;
  char line[512];
  bool inside = false;
  size_t total = 0;
  while (std::fgets(line, sizeof(line), file) != nullptr) {
    unsigned long start = 0, end = 0;
    if (std::sscanf(line, "%lx-%lx ", &start, &end) == 2) {  // a mapping's header line
      inside = start >= lo && end <= hi;
      continue;
    }
    size_t kib = 0;
    if (inside && std::sscanf(line, "AnonHugePages: %zu kB", &kib) == 1) total += kib << 10;
  }
  std::fclose(file);
  return total;
}

TEST(ShmHugePages, FourKibPagesAreNotHuge) {
  Mapping m(4 << 20, MADV_NOHUGEPAGE);
  ASSERT_NE(m.data(), nullptr);
  EXPECT_EQ(smapsHugeBytes(m.data(), m.bytes()), 0u);
  EXPECT_EQ(shm::hugePageBytes(m.data(), m.bytes()), 0u);
  EXPECT_FALSE(shm::mostlyInHugePages(m.data(), m.bytes()));
  EXPECT_EQ(shm::hugePageBytes(m.data(), 0), 0u);
}

TEST(ShmHugePages, AgreesWithSmapsOnAHugePageMapping) {
  Mapping m(8 << 20, MADV_HUGEPAGE);
  ASSERT_NE(m.data(), nullptr);
  const size_t reference = smapsHugeBytes(m.data(), m.bytes());
  if (!shm::hugePageScanAvailable()) {
    EXPECT_EQ(shm::hugePageBytes(m.data(), m.bytes()), 0u);
    GTEST_SKIP() << "this kernel has no PAGEMAP_SCAN (Linux < 6.7): the default is two copies";
  }
  EXPECT_EQ(shm::hugePageBytes(m.data(), m.bytes()), reference);
  if (reference != m.bytes()) GTEST_SKIP() << "the kernel gave " << reference << " huge bytes";
  // A sub-range that starts and ends inside huge pages counts only its own bytes.
  EXPECT_EQ(shm::hugePageBytes(m.data() + 1000, 3 << 20), size_t{3} << 20);
  EXPECT_TRUE(shm::mostlyInHugePages(m.data() + 1000, 3 << 20));
}

TEST(ShmHugePages, HalfHugeIsNotMostlyHuge) {
  Mapping m(8 << 20, MADV_HUGEPAGE, 4 << 20);  // the upper half in 4 KiB pages
  ASSERT_NE(m.data(), nullptr);
  const size_t upper = smapsHugeBytes(m.data() + (4 << 20), 4 << 20);
  const size_t whole = smapsHugeBytes(m.data(), m.bytes());
  if (!shm::hugePageScanAvailable() || whole != (size_t{4} << 20) || upper != 0) {
    GTEST_SKIP() << "no PAGEMAP_SCAN or the kernel did not keep the lower half huge";
  }
  EXPECT_EQ(shm::hugePageBytes(m.data(), m.bytes()), whole);
  EXPECT_FALSE(shm::mostlyInHugePages(m.data(), m.bytes()));
  EXPECT_TRUE(shm::mostlyInHugePages(m.data(), 4 << 20));
}

TEST(ShmHugePages, SingleCopyDefaultIsAutomatic) {
  testing::ScopedEnv env("BRAID_SHM_SINGLE_COPY_BYTES", "placeholder");
  unsetenv("BRAID_SHM_SINGLE_COPY_BYTES");
  auto config = Config::fromEnv();
  ASSERT_TRUE(config.isOk()) << config.status().message();
  EXPECT_EQ(config->shmSingleCopyBytes, Config::kAutoBytes);
}

// ---- The default rule on a 2-rank transport ------------------------------

// Rank 0 sends `bytes` from `src` to rank 1, which posts its receive only
// after a barrier; returns 0 when the send went single-copy exactly when
// `expectSingleCopy` and the data arrived intact.
int sendObserved(Bootstrap& b, const uint8_t* src, size_t bytes, bool expectSingleCopy) {
  Config config;  // shmSingleCopyBytes = kAutoBytes: the default rule
  config.shmSlotBytes = 4096;
  config.shmSlots = 8;
  auto t = createShmTransport(b, config);
  if (!t.isOk()) return 10;
  const int rank = b.rank(), peer = 1 - rank;
  std::vector<uint8_t> in(rank == 1 ? bytes : 0, 0xEE);
  Request req;
  bool sentEarly = false, moved = false;
  if (rank == 0) {
    if (!(*t)->connector(1)->postSend(src, bytes, &req).isOk()) return 11;
    for (int i = 0; i < 3; ++i) {
      if (!(*t)->connector(1)->progress(&moved).isOk()) return 12;
    }
    sentEarly = req.completed > 0;
  }
  if (!b.barrier().isOk()) return 13;
  if (rank == 1 && !(*t)->connector(0)->postRecv({in.data()}, bytes, &req).isOk()) return 14;
  Deadline deadline = Deadline::in(60);
  while (!req.done) {
    if (!(*t)->connector(peer)->progress(&moved).isOk() || deadline.expired()) return 15;
    if (!moved && !(*t)->waitForActivity(deadline, 100).isOk()) return 16;
  }
  int code = 0;
  if (rank == 1 && std::memcmp(in.data(), src, bytes) != 0) code = 17;
  if (rank == 0 && sentEarly == expectSingleCopy) code = 18;
  // The sender's buffer and transport stay until the receiver is done.
  return b.barrier().isOk() ? code : 19;
}

void runThreads(const uint8_t* src, size_t bytes, bool expectSingleCopy) {
  testing::LocalBootstrapGroup group(2, 60);
  testing::runOnRankThreads(group, [&](int r, Bootstrap& b) {
    EXPECT_EQ(sendObserved(b, src, bytes, expectSingleCopy), 0) << "rank " << r;
  });
}

TEST(ShmHugePages, DefaultSendsFourKibPagesWithTwoCopies) {
  Mapping m(4 << 20, MADV_NOHUGEPAGE);
  ASSERT_NE(m.data(), nullptr);
  runThreads(m.data() + 64, 1 << 20, false);
}

TEST(ShmHugePages, DefaultSendsHugePagesWithOneCopy) {
  Mapping m(4 << 20, MADV_HUGEPAGE);
  ASSERT_NE(m.data(), nullptr);
  if (!shm::hugePageScanAvailable() || smapsHugeBytes(m.data(), m.bytes()) != m.bytes()) {
    GTEST_SKIP() << "no PAGEMAP_SCAN or no huge pages here: the default stays two copies";
  }
  runThreads(m.data() + 64, 1 << 20, true);
  // Below kAutoSingleCopyBytes even a huge-page buffer goes through the FIFO.
  runThreads(m.data(), shm::kAutoSingleCopyBytes - 64, false);
}

// A forked child inherits a scanner's descriptor, which reads the parent's
// page tables: the scanner must reopen it. The child maps huge pages the
// parent does not have and must see them.
TEST(ShmHugePages, ForkedChildScansItsOwnPages) {
  if (!shm::hugePageScanAvailable()) GTEST_SKIP() << "no PAGEMAP_SCAN";
  shm::HugePageScanner scanner;
  uint64_t word = 1;
  (void)scanner.hugeBytes(&word, sizeof(word));  // opens the parent's pagemap
  pid_t pid = fork();
  if (pid == 0) {
    alarm(30);
    Mapping m(4 << 20, MADV_HUGEPAGE);
    size_t reference = smapsHugeBytes(m.data(), m.bytes());
    if (reference == 0) _exit(2);  // no huge pages: nothing to tell apart
    _exit(scanner.hugeBytes(m.data(), m.bytes()) == reference ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  if (WEXITSTATUS(status) == 2) GTEST_SKIP() << "the kernel gave the child no huge pages";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's scan disagreed with its smaps";
}

}  // namespace
}  // namespace braid::transport
