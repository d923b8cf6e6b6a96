// Where the sender puts each fragment in a FIFO's data area (fifo.h).
//
// The data area is one ring of bytes. Fragments are packed one after the other, each starting
// on a cache line, whatever their size: a message is cut into fragments of the size that suits
// it (FifoView::fragmentBytes), and small fragments of one message lie contiguously, so the
// receiver streams through consecutive lines the way it does through one large fragment.
// A fragment never wraps: one that would run past the end of the area is cut short there
// (a multiple of 64 bytes, as the area's size and every start are), and the next starts at 0.
//
// The receiver frees fragments in order by advancing `head` (fragments consumed); the data
// bytes it frees are those up to the end of fragment head - 1, which only the sender knows.
// So the packer remembers the end of each fragment in flight. A fragment may be written when
// a header is free (tail - head < headers) and all of its bytes are free.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace braid::transport::shm {

class FragmentPacker {
 public:
  /// Where the next fragment goes: `bytes` of it (0 for a fragment with no data bytes) at
  /// `offset` in the data area.
  struct Place {
    bool fits = false;
    size_t offset = 0;
    size_t bytes = 0;
  };

  FragmentPacker(uint64_t headers, size_t dataBytes)
      : headers_(headers), dataBytes_(dataBytes), ends_(powerOfTwoAbove(headers), 0) {}

  /// Room for fragment `tail` holding up to `want` bytes, once the receiver has consumed
  /// `head` fragments: not `fits` while the FIFO lacks a free header or those bytes (it
  /// waits for the whole fragment rather than cutting it down to what is free, which would
  /// crumble a large message into small pieces); else possibly fewer bytes than wanted, at
  /// the end of the area.
  Place reserve(uint64_t tail, uint64_t head, size_t want) const {
    Place place;
    if (tail - head >= headers_) return place;
    place.offset = offset_;
    place.bytes = std::min(want, dataBytes_ - offset_);
    // A fragment without data bytes (a small message's) needs a header only: its fast path.
    place.fits = want == 0 || cursor_ + lines(place.bytes) - consumedEnd(head) <= dataBytes_;
    return place;
  }

  /// Fragment `tail` now holds `place.bytes` at `place` (from the last reserve()).
  void commit(uint64_t tail, const Place& place) {
    cursor_ += lines(place.bytes);
    offset_ += lines(place.bytes);
    if (offset_ == dataBytes_) offset_ = 0;
    ends_[tail & (ends_.size() - 1)] = cursor_;
  }

 private:
  static uint64_t lines(size_t bytes) { return (uint64_t{bytes} + 63) / 64 * 64; }
  // A power of two (a mask instead of a division on every message) above n.
  static size_t powerOfTwoAbove(uint64_t n) {
    size_t size = 1;
    while (size <= n) size *= 2;
    return size;
  }

  // Where the data of the fragments the receiver has consumed ends. ends_ has more than
  // headers_ entries: a fragment t is written only while t < head + headers_, so the entry
  // of fragment head - 1 is never overwritten by a later fragment before head moves on.
  uint64_t consumedEnd(uint64_t head) const {
    return head == 0 ? 0 : ends_[(head - 1) & (ends_.size() - 1)];
  }

  const uint64_t headers_;
  const size_t dataBytes_;
  uint64_t cursor_ = 0;         // bytes of the area used since setup, a multiple of 64
  size_t offset_ = 0;           // cursor_ % dataBytes_
  std::vector<uint64_t> ends_;  // cursor_ after fragment t, at t & (ends_.size() - 1)
};

}  // namespace braid::transport::shm
