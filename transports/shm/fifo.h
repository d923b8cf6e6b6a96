// One single-producer, single-consumer FIFO of slots in shared memory.
//
// Fragment numbers count from setup and never wrap in practice (2^64). Slot i
// of the ring holds fragment n when n % nslots == i; its header says so by
// carrying sequence == n + 1. The receiver owns `head` (fragments consumed);
// the sender keeps its tail privately. Invariant: head <= tail <= head + nslots.
//
// Publishing: the sender fills the slot's data and header, then stores the
// header's sequence with release; the receiver polls the sequence of the slot
// it expects with acquire before reading the rest. The flag sits in the same
// cache line as the header (and, for small messages, as the data), so a small
// message costs the receiver one cache-line transfer instead of three (a
// separate tail counter, the header, the data): the LL idea, for a CPU.
// Recycling: the receiver stores head with release after it has read the slot;
// the sender loads head with acquire before overwriting it.
//
// Every fragment belongs to exactly one message: a message of N bytes travels
// as ceil(N / slotBytes) fragments (one empty fragment when N == 0), all full
// except the last. slotBytes is a multiple of 64, so every fragment holds whole
// elements of any type whose size divides 64 — the fused recv-reduce relies on it.
// A message of at most kLineBytes travels inside its header (SlotKind::kLine).
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
  kInline = 0,      // the fragment's bytes are in the slot
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
    uint64_t sourceAddress;    // kRendezvous
    uint8_t line[kLineBytes];  // kLine
  };
};
static_assert(sizeof(SlotHeader) == kCacheLine, "a header is one cache line");

/// A view of one FIFO inside a mapped segment; trivially copyable.
struct FifoView {
  FifoCounters* counters = nullptr;
  SlotHeader* headers = nullptr;  // nslots entries
  uint8_t* data = nullptr;        // nslots * slotBytes, page aligned
  size_t slotBytes = 0;
  uint64_t nslots = 0;

  SlotHeader& header(uint64_t fragment) const { return headers[fragment % nslots]; }
  uint8_t* slot(uint64_t fragment) const { return data + (fragment % nslots) * slotBytes; }
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
