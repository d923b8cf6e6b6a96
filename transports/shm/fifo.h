// One single-producer, single-consumer FIFO of fragments in shared memory: a ring of
// headers (one cache line each) and a data area of nslots * slotBytes bytes.
//
// Fragment numbers count from setup and never wrap in practice (2^64). Header i of the ring
// describes fragment n when n % nheaders == i; it says so by carrying sequence == n + 1. The
// receiver owns `head` (fragments consumed); the sender keeps its tail privately. Invariant:
// head <= tail <= head + nheaders.
//
// Publishing: the sender fills the fragment's data and header, then stores the header's
// sequence with release; the receiver polls the sequence of the header it expects with acquire
// before reading the rest. The flag sits in the same cache line as the header (and, for small
// messages, as the data), so a small message costs the receiver one cache-line transfer
// instead of three (a separate tail counter, the header, the data): the LL idea, for a CPU.
// Recycling: the receiver stores head with release after it has read the fragment; the sender
// loads head with acquire before overwriting its header or its data.
//
// Every fragment belongs to exactly one message, and its header says where its bytes lie in
// the data area (dataOffset): the sender packs fragments one after the other
// (fragment_packer.h). A message of N bytes travels as fragments of fragmentBytes(N) bytes,
// all full except the last and except one cut short at the end of the data area. Fragment
// sizes and offsets are multiples of 64, so every fragment but a message's last holds whole
// elements of any type whose size divides 64 — the fused recv-reduce relies on it.
// A message of at most kLineBytes travels inside its header (SlotKind::kLine).
//
// Why small fragments for small messages: a fragment is copied out only after all of it was
// copied in, so a message of one or two large fragments barely overlaps the two copies; cut
// into a few small fragments that lie contiguously, it pipelines while the receiver still
// streams through consecutive cache lines. Large messages keep slotBytes fragments, whose
// per-fragment hand-over costs least (perf/RESULTS.md, "Mid-size collectives").
//
// Exception: a single-copy message (see single_copy.h) is one rendezvous
// fragment whose header says where the data lies in the sender's memory; the
// receiver stores head past it only once it has read all of the data.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "transports/shm/control_block.h"

namespace braid::transport::shm {

/// The receiver's counter, on its own cache line (the sender reads it only when
/// it runs out of free slots).
struct FifoCounters {
  alignas(kCacheLine) std::atomic<uint64_t> head{0};  // fragments consumed by the receiver
};

enum class SlotKind : uint32_t {
  kInline = 0,      // the fragment's bytes are in the data area, at dataOffset
  kRendezvous = 1,  // the whole message is at sourceAddress in the sender's memory
  kLine = 2,        // the whole message (<= kLineBytes) is in the header's `line`
};

/// Payload that fits beside the header fields in one cache line.
constexpr size_t kLineBytes = 40;

/// Describes the fragment in one slot. `sequence` is the publication flag; the
/// other fields are plain data ordered by it.
struct alignas(kCacheLine) SlotHeader {
  std::atomic<uint64_t> sequence;  // fragment number + 1 once published
  uint64_t messageBytes;           // size of the whole message this fragment belongs to
  uint32_t fragmentBytes;          // bytes of it here (<= slotBytes; 0 for rendezvous)
  SlotKind kind;
  union {
    uint64_t dataOffset;       // kInline
    uint64_t sourceAddress;    // kRendezvous
    uint8_t line[kLineBytes];  // kLine
  };
};
static_assert(sizeof(SlotHeader) == kCacheLine, "a header is one cache line");

/// A message of fewer than kSmallMessageSlots * slotBytes bytes travels in fragments of
/// slotBytes / kSmallFragmentsPerSlot (rounded down to 64 bytes): by default 128 KiB slots,
/// so below 1 MiB fragments of 32 KiB.
constexpr size_t kSmallMessageSlots = 8;
constexpr size_t kSmallFragmentsPerSlot = 4;
/// Headers per FIFO: enough for the data area full of small fragments, at most this many.
constexpr uint64_t kMaxHeaders = 4096;

/// A view of one FIFO inside a mapped segment; trivially copyable.
struct FifoView {
  FifoCounters* counters = nullptr;
  SlotHeader* headers = nullptr;  // nheaders entries
  uint8_t* data = nullptr;        // nslots * slotBytes, page aligned
  size_t slotBytes = 0;           // the largest fragment
  uint64_t nslots = 0;
  uint64_t nheaders = 0;
  size_t smallFragmentBytes = 0;  // the fragment of messages below smallMessageBytes
  size_t smallMessageBytes = 0;

  size_t dataBytes() const { return nslots * slotBytes; }
  SlotHeader& header(uint64_t fragment) const { return headers[fragment % nheaders]; }
  /// How many bytes each fragment of a message of `messageBytes` holds (the last may hold fewer).
  size_t fragmentBytes(size_t messageBytes) const {
    return messageBytes < smallMessageBytes ? smallFragmentBytes : slotBytes;
  }
};

/// Makes fragment `fragment`, already written into `header` (and its slot), visible.
inline void publish(SlotHeader& header, uint64_t fragment) {
  header.sequence.store(fragment + 1, std::memory_order_release);
}

/// Whether the sender has published fragment `fragment` of `fifo`.
inline bool published(const FifoView& fifo, uint64_t fragment) {
  return fifo.header(fragment).sequence.load(std::memory_order_acquire) == fragment + 1;
}

}  // namespace braid::transport::shm
