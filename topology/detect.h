// Detection: the Graph of the machine this process runs on.
//
// Sources, each optional and each degrading to "not seen" with a note saying why:
//  - hwloc (loaded with dlopen, so the library has no link-time dependency on it):
//    NUMA nodes with their cores, the PCIe tree of bridges above GPUs and NICs;
//  - sysfs: NUMA nodes when hwloc is absent, network interfaces with their PCI
//    address, NUMA node and speed, InfiniBand ports (/sys/class/infiniband), which
//    is what ibverbs itself reads;
//  - CUDA driver (libcuda.so.1) for GPUs and NVML (libnvidia-ml.so.1) for their
//    NVLinks and NVSwitches, both with dlopen.
// The result always has at least one CPU node, so a bare container still gets a graph.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topology/graph.h"

namespace braid::topo {

struct Detection {
  Graph graph;                     // one host, count 1, no network
  std::vector<std::string> notes;  // what was missing or skipped, for braid-topo and logs
};

/// Detects this machine. Never fails: what cannot be read is left out and noted.
Detection detectLocalMachine();

/// Identifies this machine and its boot (hostname + boot id), so that ranks can tell which
/// of them share memory. Equal on every process of one host, different across hosts.
uint64_t hostIdentity();

/// A name safe for the topology file: blanks, '#' and '=' become '-'; empty becomes "-".
std::string fileSafe(const std::string& text);

// The pieces, exposed for detect.cc and for tests of their fallbacks.
namespace detail {
/// Adds NUMA nodes and the PCIe tree from hwloc; false (with a note) when unavailable.
bool addFromHwloc(HostKind* host, std::vector<std::string>* notes);
/// Adds CPU nodes from /sys/devices/system/node (or one node for the whole machine).
void addCpusFromSysfs(HostKind* host, std::vector<std::string>* notes);
/// Names the CPU model and joins consecutive CPU nodes with an (assumed) CPU interconnect.
void linkCpuNodes(HostKind* host, std::vector<std::string>* notes);
/// Adds NICs from /sys/class/net and /sys/class/infiniband, or names the ones hwloc found.
void addNicsFromSysfs(HostKind* host, std::vector<std::string>* notes);
/// Adds GPUs (CUDA driver) and NVLink/NVSwitch links (NVML).
void addGpus(HostKind* host, std::vector<std::string>* notes);
/// The CPU node a PCI device hangs from: by its NUMA node, else the first CPU node.
int cpuNodeFor(const HostKind& host, int numa);
}  // namespace detail

}  // namespace braid::topo
