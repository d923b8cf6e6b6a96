// The machine graph: what braid knows about the hardware a job runs on.
//
// A Graph is a list of host *kinds* (one per distinct machine model), each with a
// replica count, plus the network that joins hosts. A host kind is a small graph of
// nodes (CPU sockets / NUMA nodes, PCIe switches, GPUs, NVSwitches, NICs) and links
// (NVLink, PCIe, the CPU interconnect). Keeping replicas as a count rather than as
// copies lets one file describe 128 DGX H100 nodes in 60 lines, and keeps the search
// per host kind (hosts of one kind get the same rings).
//
// Units: bandwidth in GB/s (1e9 bytes per second) per direction; links are full
// duplex, so a link of 25 GB/s carries 25 GB/s each way at once. Latency in
// microseconds.
#pragma once

#include <string>
#include <vector>

namespace braid::topo {

enum class NodeType { kCpu, kPciSwitch, kGpu, kNvSwitch, kNic };
enum class LinkType { kNvLink, kPcie, kCpuLink };

/// The file keyword of each type ("cpu", "pci", "gpu", "nvswitch", "nic").
const char* nodeTypeName(NodeType type);
/// The file keyword of each link type ("nvlink", "pcie", "smp").
const char* linkTypeName(LinkType type);

struct Node {
  NodeType type = NodeType::kCpu;
  std::string name;    // unique within its host, e.g. "gpu3"
  std::string model;   // free text without spaces ("H100-SXM5"); may be empty
  std::string busId;   // PCI address for GPUs, NICs and switches; may be empty
  int numa = -1;       // CPU nodes: the NUMA node id; others: -1
  int cores = 0;       // CPU nodes: cores (hardware threads) in this NUMA node
  double nicGBps = 0;  // NICs: port speed toward the network
};

struct Link {
  int a = 0, b = 0;  // indices into HostKind::nodes
  LinkType type = LinkType::kPcie;
  double gbps = 0;  // per direction
};

/// One machine model and how many of them the job spans.
struct HostKind {
  std::string name;
  int count = 1;
  std::vector<Node> nodes;
  std::vector<Link> links;

  /// Index of the node called `name`, or -1.
  int find(const std::string& name) const;
  /// Indices of the nodes of `type`, in file order.
  std::vector<int> nodesOf(NodeType type) const;
  /// The endpoints ranks live on: the GPUs, or the CPU nodes when there are none.
  std::vector<int> endpoints() const;
  /// Sum of the NIC port speeds: what one host can push into the network.
  double nicGBps() const;
};

/// What joins hosts. Absent (gbps 0) for a single-host graph.
struct Network {
  std::string name;      // "ib-ndr", "roce", "ethernet"...
  double latencyUs = 0;  // one message across the fabric, NIC to NIC
};

struct Graph {
  std::vector<HostKind> hosts;
  Network network;

  /// Hosts in the job (replicas included).
  int hostCount() const;
  /// Endpoints (GPUs, or CPU nodes) in the job.
  int endpointCount() const;
};

}  // namespace braid::topo
