// Parser and writer of the topology file (format in topo_file.h).
//
// The parser walks lines, splits each into blank-separated fields and dispatches
// on the first. Every rejection names the line (1-based) and the field (1-based)
// at fault, so a hand-edited file is easy to fix. Limits (fields per line, nodes
// per host, numbers' ranges) keep hostile input from costing more than its size.
#include "topology/topo_file.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace braid::topo {
namespace {

constexpr int kFormatVersion = 1;
constexpr size_t kMaxNodesPerHost = 4096;
constexpr size_t kMaxLinksPerHost = 65536;
constexpr long kMaxHostCount = 1 << 20;
constexpr double kMaxGBps = 1e6;  // 1 PB/s: anything larger is a typo

class Parser {
 public:
  Result<Graph> run(const std::string& text);

 private:
  Status error(size_t field, const std::string& what) const {
    std::string where = "line " + std::to_string(line_);
    if (field > 0 && field <= fields_.size()) {
      where += ", field " + std::to_string(field) + " ('" + fields_[field - 1] + "')";
    }
    return invalidArgument("topology file: " + where + ": " + what);
  }
  Status statement();
  Status parseNetwork();
  Status parseHost();
  Status parseNode();
  Status parseLink();
  Status number(size_t field, const std::string& text, double min, double max, double* out) const;
  Status integer(size_t field, const std::string& text, long min, long max, long* out) const;
  HostKind* currentHost(size_t field, Status* status);
  Status finish();

  Graph graph_;
  bool sawHeader_ = false;
  bool sawNetwork_ = false;
  size_t line_ = 0;
  std::vector<std::string> fields_;
};

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line.substr(0, line.find('#')));
  std::string field;
  while (in >> field) out.push_back(field);
  return out;
}

Status Parser::number(size_t field, const std::string& text, double min, double max,
                      double* out) const {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(v) || v < min ||
      v > max) {
    return error(field, "'" + text + "' is not a number in [" + std::to_string(min) + ", " +
                            std::to_string(max) + "]");
  }
  *out = v;
  return Status::ok();
}

Status Parser::integer(size_t field, const std::string& text, long min, long max, long* out) const {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || v < min || v > max) {
    return error(field, "'" + text + "' is not an integer in [" + std::to_string(min) + ", " +
                            std::to_string(max) + "]");
  }
  *out = v;
  return Status::ok();
}

HostKind* Parser::currentHost(size_t field, Status* status) {
  if (graph_.hosts.empty()) {
    *status = error(field, "comes before any 'host' line");
    return nullptr;
  }
  return &graph_.hosts.back();
}

Result<Graph> Parser::run(const std::string& text) {
  std::istringstream in(text);
  std::string raw;
  while (std::getline(in, raw)) {
    ++line_;
    fields_ = split(raw);
    if (fields_.empty()) continue;
    BRAID_RETURN_IF_ERROR(statement());
  }
  ++line_;  // errors found at the end point just past the last line
  fields_.clear();
  BRAID_RETURN_IF_ERROR(finish());
  return std::move(graph_);
}

Status Parser::statement() {
  const std::string& keyword = fields_[0];
  if (!sawHeader_) {
    if (keyword != "braid-topology") {
      return error(
          1, "the file must start with 'braid-topology " + std::to_string(kFormatVersion) + "'");
    }
    if (fields_.size() != 2 || fields_[1] != std::to_string(kFormatVersion)) {
      return error(2, "only format version " + std::to_string(kFormatVersion) + " is known");
    }
    sawHeader_ = true;
    return Status::ok();
  }
  if (keyword == "network") return parseNetwork();
  if (keyword == "host") return parseHost();
  if (keyword == "node") return parseNode();
  if (keyword == "link") return parseLink();
  if (keyword == "braid-topology") return error(1, "the header appears twice");
  return error(1, "unknown statement; expected network, host, node or link");
}

// Splits "key=value"; false when there is no '=' or either side is empty.
bool keyValue(const std::string& field, std::string* key, std::string* value) {
  size_t eq = field.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == field.size()) return false;
  *key = field.substr(0, eq);
  *value = field.substr(eq + 1);
  return true;
}

Status Parser::parseNetwork() {
  if (sawNetwork_) return error(1, "a second 'network' line");
  if (fields_.size() != 3) return error(0, "expected 'network <name> latency=<us>'");
  std::string key, value;
  if (!keyValue(fields_[2], &key, &value) || key != "latency") {
    return error(3, "expected latency=<microseconds>");
  }
  graph_.network.name = fields_[1];
  BRAID_RETURN_IF_ERROR(number(3, value, 0, 1e6, &graph_.network.latencyUs));
  sawNetwork_ = true;
  return Status::ok();
}

Status Parser::parseHost() {
  if (fields_.size() < 2 || fields_.size() > 3) {
    return error(0, "expected 'host <name> [count=<n>]'");
  }
  HostKind host;
  host.name = fields_[1];
  for (const HostKind& other : graph_.hosts) {
    if (other.name == host.name) return error(2, "a host of this name was declared before");
  }
  if (fields_.size() == 3) {
    std::string key, value;
    if (!keyValue(fields_[2], &key, &value) || key != "count") {
      return error(3, "expected count=<hosts>");
    }
    long count = 0;
    BRAID_RETURN_IF_ERROR(integer(3, value, 1, kMaxHostCount, &count));
    host.count = static_cast<int>(count);
  }
  graph_.hosts.push_back(std::move(host));
  return Status::ok();
}

Status Parser::parseNode() {
  Status status;
  HostKind* host = currentHost(1, &status);
  if (host == nullptr) return status;
  if (fields_.size() < 3) return error(0, "expected 'node <type> <name> [key=value ...]'");
  if (host->nodes.size() >= kMaxNodesPerHost) return error(1, "too many nodes in one host");
  Node node;
  const std::string& type = fields_[1];
  if (type == "cpu") {
    node.type = NodeType::kCpu;
  } else if (type == "pci") {
    node.type = NodeType::kPciSwitch;
  } else if (type == "gpu") {
    node.type = NodeType::kGpu;
  } else if (type == "nvswitch") {
    node.type = NodeType::kNvSwitch;
  } else if (type == "nic") {
    node.type = NodeType::kNic;
  } else {
    return error(2, "unknown node type; expected cpu, pci, gpu, nvswitch or nic");
  }
  node.name = fields_[2];
  if (host->find(node.name) >= 0) return error(3, "a node of this name exists in this host");
  for (size_t f = 3; f < fields_.size(); ++f) {
    std::string key, value;
    if (!keyValue(fields_[f], &key, &value)) return error(f + 1, "expected key=value");
    long n = 0;
    if (key == "model") {
      node.model = value;
    } else if (key == "bus") {
      node.busId = value;
    } else if (key == "numa" && node.type == NodeType::kCpu) {
      BRAID_RETURN_IF_ERROR(integer(f + 1, value, 0, 1 << 20, &n));
      node.numa = static_cast<int>(n);
    } else if (key == "cores" && node.type == NodeType::kCpu) {
      BRAID_RETURN_IF_ERROR(integer(f + 1, value, 1, 1 << 20, &n));
      node.cores = static_cast<int>(n);
    } else if (key == "speed" && node.type == NodeType::kNic) {
      BRAID_RETURN_IF_ERROR(number(f + 1, value, 1e-3, kMaxGBps, &node.nicGBps));
    } else {
      return error(f + 1, "unknown key for a " + type + " node");
    }
  }
  if (node.type == NodeType::kNic && node.nicGBps <= 0) {
    return error(0, "a nic needs speed=<GB/s>");
  }
  host->nodes.push_back(std::move(node));
  return Status::ok();
}

Status Parser::parseLink() {
  Status status;
  HostKind* host = currentHost(1, &status);
  if (host == nullptr) return status;
  if (fields_.size() != 5) return error(0, "expected 'link <node> <node> <type> <GB/s>'");
  if (host->links.size() >= kMaxLinksPerHost) return error(1, "too many links in one host");
  Link link;
  link.a = host->find(fields_[1]);
  link.b = host->find(fields_[2]);
  if (link.a < 0) return error(2, "names no node of host '" + host->name + "' declared above");
  if (link.b < 0) return error(3, "names no node of host '" + host->name + "' declared above");
  if (link.a == link.b) return error(3, "a link must join two different nodes");
  const std::string& type = fields_[3];
  if (type == "nvlink") {
    link.type = LinkType::kNvLink;
  } else if (type == "pcie") {
    link.type = LinkType::kPcie;
  } else if (type == "smp") {
    link.type = LinkType::kCpuLink;
  } else {
    return error(4, "unknown link type; expected nvlink, pcie or smp");
  }
  BRAID_RETURN_IF_ERROR(number(5, fields_[4], 1e-3, kMaxGBps, &link.gbps));
  host->links.push_back(link);
  return Status::ok();
}

Status Parser::finish() {
  if (!sawHeader_) return error(0, "empty file; expected 'braid-topology 1'");
  if (graph_.hosts.empty()) return error(0, "no 'host' line");
  for (const HostKind& host : graph_.hosts) {
    if (host.nodes.empty()) return error(0, "host '" + host.name + "' has no nodes");
    if (host.nodesOf(NodeType::kCpu).empty()) {
      return error(0, "host '" + host.name + "' has no cpu node");
    }
  }
  if (graph_.hostCount() > 1 && !sawNetwork_) {
    return error(0, "more than one host but no 'network' line");
  }
  return Status::ok();
}

std::string formatNumber(double v) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.10g", v);
  return text;
}

}  // namespace

Result<Graph> parse(const std::string& text) { return Parser().run(text); }

std::string dump(const Graph& graph) {
  std::ostringstream out;
  out << "braid-topology " << kFormatVersion << "\n";
  if (!graph.network.name.empty()) {
    out << "network " << graph.network.name << " latency=" << formatNumber(graph.network.latencyUs)
        << "\n";
  }
  for (const HostKind& host : graph.hosts) {
    out << "\nhost " << host.name;
    if (host.count != 1) out << " count=" << host.count;
    out << "\n";
    for (const Node& node : host.nodes) {
      out << "node " << nodeTypeName(node.type) << " " << node.name;
      if (!node.model.empty()) out << " model=" << node.model;
      if (!node.busId.empty()) out << " bus=" << node.busId;
      if (node.numa >= 0) out << " numa=" << node.numa;
      if (node.cores > 0) out << " cores=" << node.cores;
      if (node.type == NodeType::kNic) out << " speed=" << formatNumber(node.nicGBps);
      out << "\n";
    }
    for (const Link& link : host.links) {
      out << "link " << host.nodes[link.a].name << " " << host.nodes[link.b].name << " "
          << linkTypeName(link.type) << " " << formatNumber(link.gbps) << "\n";
    }
  }
  return out.str();
}

Result<Graph> loadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return invalidArgument("cannot read topology file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  Result<Graph> graph = parse(text.str());
  if (!graph.isOk()) return graph.status().withContext(path);
  return graph;
}

Status dumpFile(const Graph& graph, const std::string& path) {
  std::ofstream out(path);
  out << dump(graph);
  out.close();
  if (!out) return invalidArgument("cannot write topology file '" + path + "'");
  return Status::ok();
}

}  // namespace braid::topo
