// PeerRegionLayout (see the header): offsets of every FIFO in a rank's receive region.
#include "transports/cuda_p2p/peer_region.h"

namespace braid::transport::cuda_p2p {
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
  llCounters_ = fifos * kPeerCounterBytes;
  simpleSlots_ = roundUp(llCounters_ + fifos * kPeerCounterBytes, 128);
  llSlots_ =
      roundUp(simpleSlots_ + fifos * size_t(config.simpleSlots) * config.simpleSlotBytes, 128);
  bytes_ = llSlots_ + fifos * size_t(config.llSlots) * config.llSlotBytes;
}

FifoPlace PeerRegionLayout::fifo(uint8_t* receiverBase, FifoLane lane, int channel,
                                 int from) const {
  const size_t f = index(channel, from);
  const bool ll = lane == FifoLane::kLl;
  const uint32_t slots = ll ? config_.llSlots : config_.simpleSlots;
  const uint32_t slotBytes = ll ? config_.llSlotBytes : config_.simpleSlotBytes;
  uint8_t* counters = receiverBase + (ll ? llCounters_ : simpleCounters_) + f * kPeerCounterBytes;
  uint8_t* slotMemory =
      receiverBase + (ll ? llSlots_ : simpleSlots_) + f * size_t(slots) * slotBytes;
  return FifoPlace{counters, slotMemory, slots, slotBytes};
}

}  // namespace braid::transport::cuda_p2p
