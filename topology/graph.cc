// Small queries over the machine graph (see graph.h).
#include "topology/graph.h"

namespace braid::topo {

const char* nodeTypeName(NodeType type) {
  switch (type) {
    case NodeType::kCpu:
      return "cpu";
    case NodeType::kPciSwitch:
      return "pci";
    case NodeType::kGpu:
      return "gpu";
    case NodeType::kNvSwitch:
      return "nvswitch";
    case NodeType::kNic:
      return "nic";
  }
  return "?";
}

const char* linkTypeName(LinkType type) {
  switch (type) {
    case LinkType::kNvLink:
      return "nvlink";
    case LinkType::kPcie:
      return "pcie";
    case LinkType::kCpuLink:
      return "smp";
  }
  return "?";
}

int HostKind::find(const std::string& wanted) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == wanted) return static_cast<int>(i);
  }
  return -1;
}

std::vector<int> HostKind::nodesOf(NodeType type) const {
  std::vector<int> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].type == type) out.push_back(static_cast<int>(i));
  }
  return out;
}

std::vector<int> HostKind::endpoints() const {
  std::vector<int> gpus = nodesOf(NodeType::kGpu);
  return gpus.empty() ? nodesOf(NodeType::kCpu) : gpus;
}

double HostKind::nicGBps() const {
  double sum = 0;
  for (const Node& node : nodes) {
    if (node.type == NodeType::kNic) sum += node.nicGBps;
  }
  return sum;
}

int Graph::hostCount() const {
  int n = 0;
  for (const HostKind& host : hosts) n += host.count;
  return n;
}

int Graph::endpointCount() const {
  int n = 0;
  for (const HostKind& host : hosts) n += host.count * static_cast<int>(host.endpoints().size());
  return n;
}

}  // namespace braid::topo
