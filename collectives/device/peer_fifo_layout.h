// Where the FIFOs of a cross-process device group (cuda_p2p) live, and how a rank's FIFO ends
// are wired to them.
//
// Every rank owns one receive region in its own device memory: the FIFOs it receives on, one
// per (protocol, channel, sender), laid out identically on every rank:
//
//   [Simple counters: channels x nranks] [LL counters: channels x nranks]
//   [Simple slots:    channels x nranks] [LL slots:    channels x nranks]
//
// Receivers keep their FIFOs local, so the data a receiver reads (and the tail or LL flags
// it polls) are in its own memory; the sender writes across the link (NVLink or PCIe) and
// polls only `head`, once per `slots` slots. Counters are 128-byte aligned (FifoCounters),
// slots 16-byte aligned. A rank wires its ends from every rank's region base: its receive
// end from peer p is FIFO (channel, from = p) of its own region, its send end to peer p is
// FIFO (channel, from = rank) of p's region. Plain C++: the CPU tests wire host memory the
// same way and run the executor over it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collectives/device/fifo.h"
#include "collectives/device/launch.h"

namespace braid::device {

/// The FIFO shapes a group's ranks must agree on (exchanged and compared at creation).
struct PeerFifoConfig {
  uint32_t channels = 2;
  uint32_t simpleSlots = 8;
  uint32_t simpleSlotBytes = 64 << 10;
  uint32_t llSlots = 8;
  uint32_t llSlotBytes = 4 << 10;
};

bool operator==(const PeerFifoConfig& a, const PeerFifoConfig& b);

class PeerRegionLayout {
 public:
  PeerRegionLayout(const PeerFifoConfig& config, int nranks);

  /// Bytes of one rank's receive region.
  size_t bytes() const { return bytes_; }
  const PeerFifoConfig& config() const { return config_; }

  /// The FIFO a receiver whose region starts at `receiverBase` owns for (channel, sender).
  FifoMemory fifo(uint8_t* receiverBase, Protocol protocol, int channel, int from) const;

 private:
  size_t index(int channel, int from) const { return size_t(channel) * size_t(nranks_) + from; }

  PeerFifoConfig config_;
  int nranks_;
  size_t simpleCounters_ = 0, llCounters_ = 0, simpleSlots_ = 0, llSlots_ = 0, bytes_ = 0;
};

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
      ends.sends.emplace_back(layout.fifo(bases[size_t(p)], protocol, c, rank));
      ends.recvs.emplace_back(layout.fifo(bases[size_t(rank)], protocol, c, p));
    }
  }
  return ends;
}

}  // namespace braid::device
