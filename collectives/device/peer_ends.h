// How a rank's FIFO ends are wired over the receive regions of a cuda_p2p group
// (transports/cuda_p2p/peer_region.h says where each FIFO lies): its receive end from peer p
// is FIFO (channel, from = p) of its own region, its send end to peer p is FIFO
// (channel, from = rank) of p's region. Plain C++: the CPU tests wire host memory the same
// way and run the executor over it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collectives/device/fifo.h"
#include "collectives/device/launch.h"
#include "transports/cuda_p2p/peer_region.h"

namespace braid::device {

using transport::cuda_p2p::PeerFifoConfig;
using transport::cuda_p2p::PeerRegionLayout;

static_assert(sizeof(FifoCounters) == transport::cuda_p2p::kPeerCounterBytes,
              "the cuda_p2p region reserves kPeerCounterBytes per FIFO's counters");

/// The FIFO of `protocol` a receiver whose region starts at `receiverBase` owns for
/// (channel, sender).
inline FifoMemory peerFifo(const PeerRegionLayout& layout, uint8_t* receiverBase, Protocol protocol,
                           int channel, int from) {
  using transport::cuda_p2p::FifoLane;
  const transport::cuda_p2p::FifoPlace place = layout.fifo(
      receiverBase, protocol == Protocol::kLl ? FifoLane::kLl : FifoLane::kSimple, channel, from);
  return FifoMemory{reinterpret_cast<FifoCounters*>(place.counters), place.slots, place.slotCount,
                    place.slotBytes};
}

/// Rank `rank`'s ends, [channel][peer] as runChannel wants them, wired over `bases` (every
/// rank's region, as this process addresses it: its own pointer, or a peer's opened handle).
template <class Proto>
struct WiredEnds {
  std::vector<typename Proto::SendEnd> sends;
  std::vector<typename Proto::RecvEnd> recvs;
};

template <class Proto>
WiredEnds<Proto> wirePeerEnds(const PeerRegionLayout& layout, Protocol protocol,
                              const std::vector<uint8_t*>& bases, int rank) {
  WiredEnds<Proto> ends;
  const int nranks = int(bases.size());
  for (int c = 0; c < int(layout.config().channels); ++c) {
    for (int p = 0; p < nranks; ++p) {
      ends.sends.emplace_back(peerFifo(layout, bases[size_t(p)], protocol, c, rank));
      ends.recvs.emplace_back(peerFifo(layout, bases[size_t(rank)], protocol, c, p));
    }
  }
  return ends;
}

}  // namespace braid::device
