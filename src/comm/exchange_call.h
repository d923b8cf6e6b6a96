// What a cached exchange all-reduce keeps from call to call (comm/exchange_task.h): the
// connectors, one request per peer and direction, and the staging the peers' inputs land in,
// sized for one shape. The schedule cache's entry owns it, so a connector never points at
// freed memory, even after a failed call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/op.h"
#include "transports/connector.h"

namespace braid {

class Comm;

class ExchangeCall {
 public:
  /// For calls of `bytes` per rank (0: a barrier) on `comm`, which has a transport.
  ExchangeCall(Comm& comm, size_t bytes);

  friend class ExchangeTask;  // phase 1 of one call (comm/exchange_task.h)

  /// Phase 2, once the task is done: recv = in0 op in1 op ... (op avg: divided by nranks
  /// once). Nothing for a barrier.
  void reduce(const Op& op);

 private:
  uint8_t* staged(int rank) { return stagingBase_ + static_cast<size_t>(rank) * slotBytes_; }

  const int rank_;
  const int nranks_;
  const size_t bytes_;
  std::vector<transport::Connector*> connectors_;  // by rank; null for this rank
  std::vector<transport::Request> sends_, recvs_;  // by rank
  // nranks slots of slotBytes_ (bytes_ rounded up to a cache line, so that every slot
  // starts on one and 8-byte elements never straddle two) from stagingBase_.
  const size_t slotBytes_;
  std::vector<uint8_t> staging_;
  uint8_t* stagingBase_;  // staging_'s first cache-line boundary
};

}  // namespace braid
