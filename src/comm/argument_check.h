// BRAID_CHECK=1: mismatched collectives become a clear error, not a hang.
//
// Before each collective, the ranks all-gather the signature of their call
// (which collective, count, type, op, root) — a small ring all-gather over
// the same transport, so it works inside groups — and every rank compares
// them all. So every rank sees the same mismatch at the same point and fails
// with the same braidInvalidUsage naming both calls and ranks, before any
// data moves. It costs n-1 tiny messages per collective: off by default.
//
// Whether a call is checked is decided once per communicator (Comm::checksCalls);
// checked calls all run in the engine (comm/engine.cc), whose stage for the
// exchange is the only one, so grouped, ungrouped and device-proxy calls are
// compared alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/schedule.h"
#include "comm/op.h"
#include "core/status.h"

namespace braid {

struct CallSignature {
  int32_t kind = 0;
  int32_t type = 0;
  int32_t op = 0;
  int32_t root = 0;
  uint64_t count = 0;
  char api[32] = {};
};

/// The signature of `op` as seen by every rank (fields that do not apply are zero).
CallSignature signatureOf(const Op& op);

/// Ok when every signature in `all` (one per rank) describes the same call.
Status compareSignatures(const std::vector<CallSignature>& all);

}  // namespace braid
