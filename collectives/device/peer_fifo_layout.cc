// PeerRegionLayout (see the header): offsets of every FIFO in a rank's receive region.
#include "collectives/device/peer_fifo_layout.h"

namespace braid::device {
namespace {

size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

bool operator==(const PeerFifoConfig& a, const PeerFifoConfig& b) {
  return a.channels == b.channels && a.simpleSlots == b.simpleSlots &&
         a.simpleSlotBytes == b.simpleSlotBytes && a.llSlots == b.llSlots &&
         a.llSlotBytes == b.llSlotBytes;
}

PeerRegionLayout::PeerRegionLayout(const PeerFifoConfig& config, int nranks)
    : config_(config), nranks_(nranks) {
  const size_t fifos = size_t(config.channels) * size_t(nranks);
  simpleCounters_ = 0;
  llCounters_ = fifos * sizeof(FifoCounters);
  simpleSlots_ = roundUp(llCounters_ + fifos * sizeof(FifoCounters), 128);
  llSlots_ = roundUp(
      simpleSlots_ + fifos * fifoSlotBytes(config.simpleSlots, config.simpleSlotBytes), 128);
  bytes_ = llSlots_ + fifos * fifoSlotBytes(config.llSlots, config.llSlotBytes);
}

FifoMemory PeerRegionLayout::fifo(uint8_t* receiverBase, Protocol protocol, int channel,
                                  int from) const {
  const size_t f = index(channel, from);
  const bool ll = protocol == Protocol::kLl;
  const uint32_t slots = ll ? config_.llSlots : config_.simpleSlots;
  const uint32_t slotBytes = ll ? config_.llSlotBytes : config_.simpleSlotBytes;
  auto* counters =
      reinterpret_cast<FifoCounters*>(receiverBase + (ll ? llCounters_ : simpleCounters_)) + f;
  uint8_t* slotMemory =
      receiverBase + (ll ? llSlots_ : simpleSlots_) + f * fifoSlotBytes(slots, slotBytes);
  return FifoMemory{counters, slotMemory, slots, slotBytes};
}

}  // namespace braid::device
