// What a communicator does with the topology when it starts.
//
// BRAID_TOPO_FILE names a topology file that replaces detection; every rank parses it,
// so a malformed file fails braidCommInitRank on every rank with the file's line and
// field. BRAID_TOPO_DUMP_FILE makes rank 0 write the graph (detected, or loaded) to that
// path, the way to capture a machine for braid-sim or a bug report. Today the CPU path's
// selection needs nothing else from the graph (its constants are calibrated per link);
// the GPU transports will take their rings from here. With BRAID_DEBUG=INFO each rank
// also logs its L3 and NUMA domains (cache_domain.h).
#pragma once

#include "core/status.h"
#include "topology/graph.h"

namespace braid::topo {

/// The graph for this process: BRAID_TOPO_FILE's, else the detected one. Writes it to
/// BRAID_TOPO_DUMP_FILE when `rank` is 0 (a failed write is a warning, not an error).
Result<Graph> prepareTopology(int rank);

}  // namespace braid::topo
