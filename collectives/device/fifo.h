// The memory of one connector FIFO (one sender, one receiver), shared by both protocols.
//
// A FIFO is `slots` slots of `slotBytes` bytes, used round-robin, plus two counters in
// separate cache lines so that each is written by one side only:
//   tail — slots the sender has filled (Simple only: LL slots carry their own flags);
//   head — slots the receiver has consumed, i.e. that the sender may fill again.
// Counters only grow (64 bits never wrap), so "slot s is free" is s - head < slots and
// "slot s is full" is s < tail. The memory starts zeroed. On one GPU the FIFO lives in device
// memory; across GPUs in the receiver's (cuda_p2p), across hosts in pinned host memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/device/portability.h"

namespace braid::device {

struct alignas(128) FifoCounters {
  uint64_t tail;
  uint8_t pad0[120];
  uint64_t head;
  uint8_t pad1[120];
};

/// Where a FIFO lives; a plain value the kernel receives by copy.
struct FifoMemory {
  FifoCounters* counters = nullptr;
  uint8_t* slots = nullptr;  // slots * slotBytes bytes, 16-byte aligned
  uint32_t slotCount = 0;
  uint32_t slotBytes = 0;  // a multiple of 16
};

/// Bytes of slot memory a FIFO needs.
BRAID_HD size_t fifoSlotBytes(uint32_t slotCount, uint32_t slotBytes) {
  return size_t(slotCount) * slotBytes;
}

/// A bound on polls of a peer that shows no progress, after which the executor gives up and
/// reports a stall instead of hanging (a mismatched schedule or a dead peer).
struct SpinBudget {
  uint64_t limit = uint64_t(1) << 26;
  uint64_t used = 0;
  BRAID_HD bool exhausted() const { return used >= limit; }
  BRAID_HD void wait() {
    ++used;
    spinPause();
  }
};

}  // namespace braid::device
