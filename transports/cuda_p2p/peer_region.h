// Where the FIFOs of a cuda_p2p group live in each rank's receive region.
//
// Every rank owns one receive region in its own device memory: the FIFOs it receives on, one
// per (protocol, channel, sender), laid out identically on every rank:
//
//   [Simple counters: channels x nranks] [LL counters: channels x nranks]
//   [Simple slots:    channels x nranks] [LL slots:    channels x nranks]
//
// Receivers keep their FIFOs local, so the data a receiver reads (and the tail or LL flags
// it polls) are in its own memory; the sender writes across the link (NVLink or PCIe) and
// polls only `head`, once per `slots` slots. Counters take kPeerCounterBytes each, 128-byte
// aligned; slots are 16-byte aligned. This file speaks of bytes only: the device executor
// (collectives/device/peer_ends.h) lays its FIFO types over these places and wires a rank's
// ends from every rank's region base. Plain C++: the CPU tests use host memory the same way.
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid::transport::cuda_p2p {

/// The FIFO shapes a group's ranks must agree on (exchanged and compared at creation).
struct PeerFifoConfig {
  uint32_t channels = 2;
  uint32_t simpleSlots = 8;
  uint32_t simpleSlotBytes = 64 << 10;
  uint32_t llSlots = 8;
  uint32_t llSlotBytes = 4 << 10;
};

bool operator==(const PeerFifoConfig& a, const PeerFifoConfig& b);

/// Bytes of one FIFO's counters: tail and head, each in a 128-byte line of its own (the
/// executor's FifoCounters, which checks it matches).
constexpr size_t kPeerCounterBytes = 256;

/// The two kinds of FIFO in a region: the Simple and the LL protocol's.
enum class FifoLane : uint8_t { kSimple, kLl };

/// One FIFO inside a region.
struct FifoPlace {
  uint8_t* counters = nullptr;  // kPeerCounterBytes, 128-byte aligned
  uint8_t* slots = nullptr;     // slotCount * slotBytes bytes, 16-byte aligned
  uint32_t slotCount = 0;
  uint32_t slotBytes = 0;
};

class PeerRegionLayout {
 public:
  PeerRegionLayout(const PeerFifoConfig& config, int nranks);

  /// Bytes of one rank's receive region.
  size_t bytes() const { return bytes_; }
  const PeerFifoConfig& config() const { return config_; }

  /// The FIFO a receiver whose region starts at `receiverBase` owns for (channel, sender).
  FifoPlace fifo(uint8_t* receiverBase, FifoLane lane, int channel, int from) const;

 private:
  size_t index(int channel, int from) const { return size_t(channel) * size_t(nranks_) + from; }

  PeerFifoConfig config_;
  int nranks_;
  size_t simpleCounters_ = 0, llCounters_ = 0, simpleSlots_ = 0, llSlots_ = 0, bytes_ = 0;
};

}  // namespace braid::transport::cuda_p2p
