// The topology file: a human-readable text form of a Graph (graph.h).
//
// Written by BRAID_TOPO_DUMP_FILE and braid-topo, read by BRAID_TOPO_FILE, braid-topo
// --file and braid-sim, and used for reference machines in topology/reference/.
// One statement per line; '#' starts a comment; fields are separated by blanks:
//
//   braid-topology 1                         first statement: format and version
//   network <name> latency=<us>              the fabric between hosts (needed for >1 host)
//   host <name> [count=<n>]                  starts a host kind; what follows belongs to it
//   node <type> <name> [key=value ...]       type: cpu pci gpu nvswitch nic
//        keys: model=<text> bus=<pci address> numa=<id> cores=<n> speed=<GB/s, nics>
//   link <name> <name> <type> <GB/s>         type: nvlink pcie smp; GB/s per direction
//
// The parser is strict: an unknown keyword or key, a duplicate name, a number that is
// not one, a link to an unknown node — each is an error naming the line and field.
// parse() is pure (no I/O), so it can be fuzzed.
#pragma once

#include <string>

#include "core/status.h"
#include "topology/graph.h"

namespace braid::topo {

/// The graph `text` describes, or an invalid-argument error "line L, field F: ...".
Result<Graph> parse(const std::string& text);

/// `graph` as text that parse() reads back into an equal graph.
std::string dump(const Graph& graph);

/// parse() of a file's contents; errors name the path too.
Result<Graph> loadFile(const std::string& path);

/// Writes dump(graph) to `path`.
Status dumpFile(const Graph& graph, const std::string& path);

}  // namespace braid::topo
