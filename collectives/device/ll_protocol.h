// The LL protocol: small messages with the flag in the data (see ll_line.h for the format).
//
// A slot of a FIFO holds slotBytes / 16 lines, i.e. slotBytes / 2 payload bytes. The sender
// waits for a free slot (head, as Simple) and each thread stores its lines with the slot's
// flag: no barrier, no fence, no tail counter. The receiver's leader polls the slot's first
// line to learn that the slot has started to arrive; then each thread polls its own lines
// (they may land in any order) until their flags match. Returning a slot (head + 1) comes
// after a barrier, so the sender never overwrites a line a thread has still to read.
//
// State is shared by the group and changed by the leader only, as in simple_protocol.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/device/fifo.h"
#include "collectives/device/ll_line.h"
#include "collectives/device/memory_order.h"
#include "collectives/device/pack.h"

namespace braid::device {

struct LlProtocol {
  static constexpr size_t kPackBytes = 8;  // payload of one 16-byte line
  static constexpr size_t kLineBytes = 16;

  class SendEnd {
   public:
    SendEnd() = default;
    /// `start`: the FIFO's counters at creation (0; tests start near a flag wrap).
    BRAID_HD explicit SendEnd(const FifoMemory& fifo, uint64_t start = 0)
        : fifo_(fifo), sent_(start), headSeen_(start) {}
    BRAID_HD size_t payloadBytes() const { return fifo_.slotBytes / 2; }
    BRAID_HD bool ready() {
      if (sent_ - headSeen_ < fifo_.slotCount) return true;
      headSeen_ = loadAcquire(&fifo_.counters->head);
      return sent_ - headSeen_ < fifo_.slotCount;
    }
    BRAID_HD void store(size_t pack, const Pack<kPackBytes>& x) {
      uint64_t w0, w1;
      llPackLine(x.words[0], llFlag(sent_), &w0, &w1);
      storePairRelaxed(line(pack), w0, w1);
    }
    /// The flags are the publication; the barrier only keeps the leader's count from
    /// moving while other threads still stamp this slot's lines.
    template <class G>
    BRAID_HD void post(const G& group) {
      group.sync();
      if (group.leader()) ++sent_;
    }
    BRAID_HD uint64_t sent() const { return sent_; }

   private:
    BRAID_HD uint64_t* line(size_t pack) const {
      uint8_t* slot = fifo_.slots + (sent_ % fifo_.slotCount) * size_t(fifo_.slotBytes);
      return reinterpret_cast<uint64_t*>(slot + pack * kLineBytes);
    }
    FifoMemory fifo_;
    uint64_t sent_ = 0;
    uint64_t headSeen_ = 0;
  };

  class RecvEnd {
   public:
    RecvEnd() = default;
    BRAID_HD explicit RecvEnd(const FifoMemory& fifo, uint64_t start = 0)
        : fifo_(fifo), received_(start) {}
    BRAID_HD size_t payloadBytes() const { return fifo_.slotBytes / 2; }
    /// Whether the slot's first line has arrived (the rest follow without our help).
    BRAID_HD bool ready() {
      uint64_t w0, w1, payload;
      loadPairRelaxed(line(0), &w0, &w1);
      return llUnpackLine(w0, w1, llFlag(received_), &payload);
    }
    /// Waits for line `pack`; on an exhausted budget returns zeros (the caller reports it).
    BRAID_HD Pack<kPackBytes> load(size_t pack, SpinBudget* budget) const {
      Pack<kPackBytes> x{};
      const uint32_t flag = llFlag(received_);
      for (;;) {
        uint64_t w0, w1;
        loadPairRelaxed(line(pack), &w0, &w1);
        if (llUnpackLine(w0, w1, flag, &x.words[0]) || budget->exhausted()) return x;
        budget->wait();
      }
    }
    template <class G>
    BRAID_HD void release(const G& group) {
      group.sync();
      if (group.leader()) storeRelease(&fifo_.counters->head, ++received_);
    }
    BRAID_HD uint64_t received() const { return received_; }

   private:
    BRAID_HD const uint64_t* line(size_t pack) const {
      const uint8_t* slot = fifo_.slots + (received_ % fifo_.slotCount) * size_t(fifo_.slotBytes);
      return reinterpret_cast<const uint64_t*>(slot + pack * kLineBytes);
    }
    FifoMemory fifo_;
    uint64_t received_ = 0;
  };
};

}  // namespace braid::device
