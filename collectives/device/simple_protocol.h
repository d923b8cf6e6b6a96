// The Simple protocol: bulk data in large FIFO slots, published with one release store.
//
// Sender, per slot: wait until the slot is free (head), the group writes it with 16-byte
// stores, meets at a barrier, and the leader publishes tail + 1 (fence, then store). Receiver:
// the leader waits for tail to pass the slot, acquires, the group reads it, meets at a
// barrier, and the leader returns the slot (head + 1). Each side keeps a private cached copy
// of the other side's counter, so a ready() check is a local compare most of the time.
//
// An end's state is shared by the group (device: global memory of the channel) and changed
// by the leader only: ready() is called by the leader, whose answer reaches the others via
// Group::agree (a barrier); post()/release() are called by every thread and count after a
// barrier, so nobody reads a count while it moves.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/device/fifo.h"
#include "collectives/device/memory_order.h"
#include "collectives/device/pack.h"

namespace braid::device {

struct SimpleProtocol {
  static constexpr size_t kPackBytes = 16;

  class SendEnd {
   public:
    SendEnd() = default;
    /// `start`: the FIFO's counters at creation (0; tests start near a flag wrap).
    BRAID_HD explicit SendEnd(const FifoMemory& fifo, uint64_t start = 0)
        : fifo_(fifo), sent_(start), headSeen_(start) {}
    BRAID_HD size_t payloadBytes() const { return fifo_.slotBytes; }
    BRAID_HD bool ready() {
      if (sent_ - headSeen_ < fifo_.slotCount) return true;
      headSeen_ = loadAcquire(&fifo_.counters->head);
      return sent_ - headSeen_ < fifo_.slotCount;
    }
    BRAID_HD void store(size_t pack, const Pack<kPackBytes>& x) {
      *reinterpret_cast<Pack<kPackBytes>*>(slot() + pack * kPackBytes) = x;
    }
    template <class G>
    BRAID_HD void post(const G& group) {
      group.sync();
      if (group.leader()) storeRelease(&fifo_.counters->tail, ++sent_);
    }
    BRAID_HD uint64_t sent() const { return sent_; }

   private:
    BRAID_HD uint8_t* slot() const {
      return fifo_.slots + (sent_ % fifo_.slotCount) * size_t(fifo_.slotBytes);
    }
    FifoMemory fifo_;
    uint64_t sent_ = 0;
    uint64_t headSeen_ = 0;
  };

  class RecvEnd {
   public:
    RecvEnd() = default;
    BRAID_HD explicit RecvEnd(const FifoMemory& fifo, uint64_t start = 0)
        : fifo_(fifo), received_(start), tailSeen_(start) {}
    BRAID_HD size_t payloadBytes() const { return fifo_.slotBytes; }
    BRAID_HD bool ready() {
      if (received_ < tailSeen_) return true;
      tailSeen_ = loadAcquire(&fifo_.counters->tail);
      return received_ < tailSeen_;
    }
    /// The pack never waits: ready() and the barrier in agree() ordered it after the data.
    /// A volatile (uncached) read, so no thread sees a stale L1 line of the slot's last use.
    BRAID_HD Pack<kPackBytes> load(size_t pack, SpinBudget*) const {
      Pack<kPackBytes> x;
      loadPairRelaxed(reinterpret_cast<const uint64_t*>(slot() + pack * kPackBytes), &x.words[0],
                      &x.words[1]);
      return x;
    }
    template <class G>
    BRAID_HD void release(const G& group) {
      group.sync();
      if (group.leader()) storeRelease(&fifo_.counters->head, ++received_);
    }
    BRAID_HD uint64_t received() const { return received_; }

   private:
    BRAID_HD const uint8_t* slot() const {
      return fifo_.slots + (received_ % fifo_.slotCount) * size_t(fifo_.slotBytes);
    }
    FifoMemory fifo_;
    uint64_t received_ = 0;
    uint64_t tailSeen_ = 0;
  };
};

}  // namespace braid::device
