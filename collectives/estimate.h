// How long a call would take, from the cost model (topology/cost_model.h), without running
// it: what braidGroupSimulateEnd reports.
//
// A collective is estimated with the algorithm selection picked (select.h) and the model's
// constants for the link the ranks share ("shm" on one host, "socket" across hosts). Where
// the model has no constants for that algorithm, the fastest algorithm it does know for the
// collective stands in. Collectives the model does not cover are estimated as the modelled
// one that moves the same bytes over as many steps: all-to-allv as all-to-all (its per-peer
// mean), gather and scatter as all-gather, a barrier as an all-reduce of nothing, and a
// send or receive as a broadcast between two ranks. The constants describe CPU links; calls
// on device buffers get the same estimate.
#pragma once

#include <cstddef>
#include <string>

#include "collectives/schedule.h"

namespace braid::coll {

/// Predicted microseconds for `args` run with `algorithm` (as selection names it); 0 for a
/// single rank, whose calls are local copies.
double estimateCollectiveUs(const CollArgs& args, const std::string& algorithm);

/// Predicted microseconds for one send (or receive) of `bytes` between two ranks; `acrossHosts`
/// picks the socket constants.
double estimatePointToPointUs(size_t bytes, bool acrossHosts);

}  // namespace braid::coll
