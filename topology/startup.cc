// BRAID_TOPO_FILE / BRAID_TOPO_DUMP_FILE at communicator start (see startup.h).
#include "topology/startup.h"

#include <cstdlib>

#include "core/log.h"
#include "topology/cache_domain.h"
#include "topology/detect.h"
#include "topology/topo_file.h"

namespace braid::topo {

Result<Graph> prepareTopology(int rank) {
  const char* file = std::getenv("BRAID_TOPO_FILE");
  const char* dumpPath = std::getenv("BRAID_TOPO_DUMP_FILE");
  const bool wantFile = file != nullptr && *file != '\0';
  const bool wantDump = dumpPath != nullptr && *dumpPath != '\0' && rank == 0;
  // The rank's L3 and NUMA domains (read only when the log shows them: hwloc takes ms).
  BRAID_INFO("topology: rank %d: %s", rank, describe(thisThreadDomains()).c_str());
  if (!wantFile && !wantDump) return Graph{};  // detection costs milliseconds: skip it
  Graph graph;
  if (wantFile) {
    Result<Graph> loaded = loadFile(file);
    if (!loaded.isOk()) return loaded.status().withContext("BRAID_TOPO_FILE");
    graph = std::move(*loaded);
  } else {
    Detection detection = detectLocalMachine();
    for (const std::string& note : detection.notes) BRAID_INFO("topology: %s", note.c_str());
    graph = std::move(detection.graph);
  }
  BRAID_INFO("topology: %d host(s), %d endpoint(s)", graph.hostCount(), graph.endpointCount());
  if (wantDump) {
    Status written = dumpFile(graph, dumpPath);
    if (!written.isOk()) BRAID_WARN("BRAID_TOPO_DUMP_FILE: %s", written.message().c_str());
  }
  return graph;
}

}  // namespace braid::topo
