// One single-producer, single-consumer FIFO of slots in shared memory.
//
// Counters count fragments since setup and never wrap in practice (2^64):
// the sender owns `tail`, the receiver owns `head`; slot i of the ring holds
// fragment number n when n % nslots == i. Invariant: head <= tail <= head + nslots.
//
// Publishing: the sender fills the slot's data and header, then stores tail
// with release; the receiver loads tail with acquire before reading them.
// Recycling: the receiver stores head with release after it has read the slot;
// the sender loads head with acquire before overwriting it.
//
// Every fragment belongs to exactly one message: a message of N bytes travels
// as ceil(N / slotBytes) fragments (one empty fragment when N == 0), all full
// except the last. slotBytes is a multiple of 64, so every fragment holds whole
// elements of any type whose size divides 64 — the fused recv-reduce relies on it.
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

/// The two counters, on separate cache lines so sender and receiver do not
/// fight over one line.
struct FifoCounters {
  alignas(kCacheLine) std::atomic<uint64_t> tail{0};  // fragments published by the sender
  alignas(kCacheLine) std::atomic<uint64_t> head{0};  // fragments consumed by the receiver
};

enum class SlotKind : uint64_t {
  kInline = 0,      // the fragment's bytes are in the slot
  kRendezvous = 1,  // the whole message is at sourceAddress in the sender's memory
};

/// Describes the fragment in one slot; plain data, ordered by the counters.
struct alignas(kCacheLine) SlotHeader {
  uint64_t messageBytes;   // size of the whole message this fragment belongs to
  uint64_t fragmentBytes;  // bytes of it in this slot (<= slotBytes; 0 for rendezvous)
  SlotKind kind;
  uint64_t sourceAddress;  // rendezvous only
};

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

}  // namespace braid::transport::shm
