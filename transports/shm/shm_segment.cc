#include "transports/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace braid::transport::shm {
namespace {

constexpr size_t kPage = 4096;
// Generous bounds that keep the arithmetic below far from overflow.
constexpr size_t kMaxSlotBytes = size_t{1} << 30;
constexpr int kMaxSlots = 4096;

size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Closes a descriptor on every path out of create/open.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() { ::close(fd_); }

 private:
  int fd_;
};

Result<uint8_t*> mapShared(int fd, size_t bytes, const std::string& name) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return systemError("shm: mmap of " + name, errno);
  return static_cast<uint8_t*>(p);
}

}  // namespace

void prefault(const FifoView& fifo) {
#ifdef MADV_POPULATE_WRITE
  uint8_t* begin = reinterpret_cast<uint8_t*>(fifo.counters);  // page aligned: a FIFO's start
  uint8_t* end = fifo.data + fifo.dataBytes();
  madvise(begin, static_cast<size_t>(end - begin), MADV_POPULATE_WRITE);  // failure: no harm
#else
  (void)fifo;
#endif
}

Result<SegmentLayout> SegmentLayout::compute(int nranks, size_t slotBytes, int nslots) {
  if (nranks < 1) return invalidArgument("shm: nranks must be >= 1, got " + std::to_string(nranks));
  if (slotBytes == 0 || slotBytes % 64 != 0 || slotBytes > kMaxSlotBytes) {
    return invalidArgument(
        "shm: BRAID_SHM_SLOT_BYTES must be a multiple of 64 in [64, 1 GiB], got " +
        std::to_string(slotBytes));
  }
  if (nslots < 1 || nslots > kMaxSlots) {
    return invalidArgument("shm: BRAID_SHM_SLOTS must be in [1, 4096], got " +
                           std::to_string(nslots));
  }
  SegmentLayout layout;
  layout.nranks = nranks;
  layout.slotBytes = slotBytes;
  layout.nslots = static_cast<uint64_t>(nslots);
  layout.smallFragmentBytes = std::max<size_t>(64, slotBytes / kSmallFragmentsPerSlot / 64 * 64);
  layout.smallMessageBytes = kSmallMessageSlots * slotBytes;
  // A header per fragment of a data area full of small ones.
  const uint64_t smallFragments = nslots * slotBytes / layout.smallFragmentBytes;
  layout.nheaders = std::max<uint64_t>(nslots, std::min(smallFragments, kMaxHeaders));
  layout.fifoHeaderBytes =
      roundUp(sizeof(FifoCounters) + layout.nheaders * sizeof(SlotHeader), kPage);
  layout.fifoBytes = layout.fifoHeaderBytes + roundUp(nslots * slotBytes, kPage);
  layout.totalBytes = controlBytes() + (nranks - 1) * layout.fifoBytes;
  return layout;
}

size_t SegmentLayout::controlBytes() { return roundUp(sizeof(ControlBlock), kPage); }

size_t SegmentLayout::fifoOffset(int owner, int sender) const {
  const size_t index = sender < owner ? sender : sender - 1;  // the owner has no FIFO from itself
  return controlBytes() + index * fifoBytes;
}

FifoView SegmentLayout::fifo(uint8_t* base, int owner, int sender) const {
  uint8_t* start = base + fifoOffset(owner, sender);
  FifoView view;
  view.counters = reinterpret_cast<FifoCounters*>(start);
  view.headers = reinterpret_cast<SlotHeader*>(start + sizeof(FifoCounters));
  view.data = start + fifoHeaderBytes;
  view.slotBytes = slotBytes;
  view.nslots = nslots;
  view.nheaders = nheaders;
  view.smallFragmentBytes = smallFragmentBytes;
  view.smallMessageBytes = smallMessageBytes;
  return view;
}

std::string segmentName(const std::string& commTag, int rank) {
  return "/braid-" + commTag + "-" + std::to_string(rank);
}

Result<std::unique_ptr<ShmSegment>> ShmSegment::create(
    const std::string& name, size_t bytes, const std::vector<PagePlacement>& placement) {
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return systemError("shm: cannot create segment " + name, errno);
  FdCloser closer(fd);
  // From here on the name exists: every failure path must remove it.
  auto fail = [&](Status status) {
    shm_unlink(name.c_str());
    return status;
  };
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    return fail(systemError("shm: cannot size segment " + name, errno));
  }
  auto base = mapShared(fd, bytes, name);
  if (!base.isOk()) return fail(base.status());
  std::unique_ptr<ShmSegment> segment(new ShmSegment(name, *base, bytes, /*linked=*/true));
  // The policy lands on the memory object, which allocates pages on reserve or first
  // touch: so it must precede the reserve below (which allocates every page on tmpfs).
  segment->placementStatus_ = applyPlacement(*base, placement);
  int err = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (err != 0 && err != EOPNOTSUPP && err != EINVAL) {
    // The segment's destructor unmaps and unlinks.
    return systemError("shm: cannot reserve " + std::to_string(bytes) + " bytes for " + name +
                           " (is /dev/shm full? lower BRAID_SHM_SLOTS or "
                           "BRAID_SHM_SLOT_BYTES)",
                       err);
  }
  return segment;
}

Result<std::unique_ptr<ShmSegment>> ShmSegment::open(const std::string& name, size_t bytes) {
  int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) {
    std::string hint = errno == ENOENT ? " (is that rank on another host, or in another "
                                         "/dev/shm namespace?)"
                                       : "";
    return systemError("shm: cannot open segment " + name + hint, errno);
  }
  FdCloser closer(fd);
  struct stat st;
  if (fstat(fd, &st) != 0) return systemError("shm: cannot stat segment " + name, errno);
  if (static_cast<size_t>(st.st_size) != bytes) {
    return internalError("shm: segment " + name + " has " + std::to_string(st.st_size) +
                         " bytes, expected " + std::to_string(bytes));
  }
  BRAID_ASSIGN_OR_RETURN(auto base, mapShared(fd, bytes, name));
  return std::unique_ptr<ShmSegment>(new ShmSegment(name, base, bytes, /*linked=*/false));
}

ShmSegment::~ShmSegment() {
  unlink();
  munmap(base_, bytes_);
}

void ShmSegment::unlink() {
  if (!linked_) return;
  shm_unlink(name_.c_str());
  linked_ = false;
}

}  // namespace braid::transport::shm
