// FIFOs and FIFO ends for the device executor's CPU tests: host threads stand in for the
// thread blocks of several ranks, and this holds the memory a GPU would hold in device
// memory — one FIFO per (sender, receiver, channel), zeroed, 16-byte-aligned slots.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "collectives/device/fifo.h"

namespace braid::testing {

template <class Proto>
class DeviceHostFabric {
 public:
  DeviceHostFabric(int nranks, int channels, uint32_t slotCount, uint32_t slotBytes)
      : nranks_(nranks), channels_(channels) {
    const size_t fifos = size_t(nranks) * nranks * channels;
    counters_ = std::make_unique<device::FifoCounters[]>(fifos);
    const size_t packsPerFifo = device::fifoSlotBytes(slotCount, slotBytes) / 16;
    slots_.assign(fifos * packsPerFifo, Slot{});
    for (int ch = 0; ch < channels; ++ch) {
      for (int from = 0; from < nranks; ++from) {
        for (int to = 0; to < nranks; ++to) {
          const size_t f = index(from, to, ch);
          device::FifoMemory m{&counters_[f], reinterpret_cast<uint8_t*>(&slots_[f * packsPerFifo]),
                               slotCount, slotBytes};
          sends_.resize(fifos);
          recvs_.resize(fifos);
          sends_[index(from, to, ch)] = typename Proto::SendEnd(m);
          recvs_[index(to, from, ch)] = typename Proto::RecvEnd(m);
        }
      }
    }
  }

  /// Rank `rank`'s send ends on `channel`, indexed by peer (as runChannel wants).
  typename Proto::SendEnd* sends(int rank, int channel) { return &sends_[index(rank, 0, channel)]; }
  typename Proto::RecvEnd* recvs(int rank, int channel) { return &recvs_[index(rank, 0, channel)]; }

 private:
  struct alignas(16) Slot {
    uint8_t bytes[16];
  };
  // Ends are stored [channel][owner][peer]; FIFOs [channel][from][to].
  size_t index(int a, int b, int ch) const { return (size_t(ch) * nranks_ + a) * nranks_ + b; }

  int nranks_, channels_;
  std::unique_ptr<device::FifoCounters[]> counters_;
  std::vector<Slot> slots_;
  std::vector<typename Proto::SendEnd> sends_;
  std::vector<typename Proto::RecvEnd> recvs_;
};

}  // namespace braid::testing
