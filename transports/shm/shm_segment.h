// A rank's POSIX shared-memory segment and its layout.
//
//   [ ControlBlock, one page ][ FIFO from peer a ][ FIFO from peer b ] ...
//   FIFO: [ FifoCounters | SlotHeader x nheaders ] (page padded) [ nslots x slotBytes ]
//
// The segment of rank r holds r's *inbound* FIFOs, one per peer, ordered by
// peer rank with r itself skipped. Every rank computes the same layout from
// (nranks, slotBytes, nslots), so nothing but those numbers is exchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "transports/shm/control_block.h"
#include "transports/shm/fifo.h"
#include "transports/shm/numa_placement.h"

namespace braid::transport::shm {

struct SegmentLayout {
  int nranks = 0;
  size_t slotBytes = 0;
  uint64_t nslots = 0;
  uint64_t nheaders = 0;          // fifo.h: enough for a data area of small fragments
  size_t smallFragmentBytes = 0;  // FifoView::fragmentBytes
  size_t smallMessageBytes = 0;
  size_t fifoHeaderBytes = 0;  // counters + slot headers, page padded
  size_t fifoBytes = 0;        // one whole FIFO, page padded
  size_t totalBytes = 0;

  /// Validates the configuration (slotBytes a positive multiple of 64, nslots >= 1)
  /// and computes offsets; errors name the BRAID_SHM_* variable at fault.
  static Result<SegmentLayout> compute(int nranks, size_t slotBytes, int nslots);

  /// The FIFO in `owner`'s segment (mapped at `base`) that `sender` writes into.
  FifoView fifo(uint8_t* base, int owner, int sender) const;
  /// Where that FIFO starts in the segment (page aligned); it spans fifoBytes.
  size_t fifoOffset(int owner, int sender) const;
  /// The control block's page-padded size: the first FIFO starts there.
  static size_t controlBytes();

  static ControlBlock* control(uint8_t* base) { return reinterpret_cast<ControlBlock*>(base); }
};

/// Maps the pages of `fifo` (counters, headers and slots) into this process now, writable, so
/// that the first messages through it take no page faults: a fault per 4 KiB page costs more
/// than copying the page, and the first use of every slot would pay it. Best effort: on a
/// kernel without MADV_POPULATE_WRITE (Linux < 5.14) the first use pays as before.
void prefault(const FifoView& fifo);

/// "/braid-<commTag>-<rank>": the shm_open name of `rank`'s segment.
std::string segmentName(const std::string& commTag, int rank);

/// A mapping of one segment. The creator owns the name: it unlinks it (at the
/// latest on destruction) so that nothing is left in /dev/shm.
class ShmSegment {
 public:
  /// Creates a new segment of `bytes` (failing if the name exists), maps it, places its
  /// pages by `placement` (numa_placement.h; before any page exists, so every page and every
  /// mapping follows it), then reserves its memory, so that a full /dev/shm is an error here
  /// rather than a SIGBUS later. The memory reads as zeros. A placement the kernel refuses is
  /// not an error: placementStatus() says why, and the pages go where first touched.
  static Result<std::unique_ptr<ShmSegment>> create(
      const std::string& name, size_t bytes, const std::vector<PagePlacement>& placement = {});

  /// Maps an existing segment, which must be exactly `bytes` long.
  static Result<std::unique_ptr<ShmSegment>> open(const std::string& name, size_t bytes);

  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  /// Removes the name (creator only; idempotent). The mappings stay valid.
  void unlink();

  uint8_t* base() const { return base_; }
  size_t bytes() const { return bytes_; }
  const std::string& name() const { return name_; }
  /// Ok when the placement given to create() holds (or none was given); else why not.
  const Status& placementStatus() const { return placementStatus_; }

 private:
  ShmSegment(std::string name, uint8_t* base, size_t bytes, bool linked)
      : name_(std::move(name)), base_(base), bytes_(bytes), linked_(linked) {}

  const std::string name_;
  uint8_t* const base_;
  const size_t bytes_;
  bool linked_;  // this process created the name and has not removed it yet
  Status placementStatus_;
};

}  // namespace braid::transport::shm
