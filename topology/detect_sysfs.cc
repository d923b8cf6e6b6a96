// Detection from sysfs: NUMA nodes (when hwloc is absent) and network ports.
//
// A port's PCI address is the last path component of its resolved device link that
// looks like "0000:3b:00.0" (virtio puts a virtioN node below the PCI function). The
// port's speed comes from /sys/class/net/X/speed (Mb/s) or, for InfiniBand, from
// ports/1/rate; a virtual NIC reports none, and gets an assumed 10 Gb/s and a note.
#include <unistd.h>

#include <cctype>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "topology/detect.h"

namespace braid::topo::detail {
namespace {

namespace fs = std::filesystem;

constexpr double kAssumedNicGBps = 1.25;     // 10 Gb/s when a port does not say
constexpr double kAssumedNumaLinkGBps = 20;  // one UPI/xGMI link, when nothing says

std::string readLine(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool looksLikePciAddress(const std::string& s) {
  // dddd:bb:dd.f in hex
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11}) {
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

std::string pciAddressOf(const fs::path& deviceLink) {
  std::error_code ec;
  fs::path real = fs::canonical(deviceLink, ec);
  if (ec) return "";
  std::string found;
  for (const fs::path& part : real) {
    if (looksLikePciAddress(part.string())) found = part.string();
  }
  return found;
}

int numaOfPci(const std::string& address) {
  std::string text = readLine("/sys/bus/pci/devices/" + address + "/numa_node");
  int numa = text.empty() ? -1 : std::atoi(text.c_str());
  return numa < 0 ? 0 : numa;
}

int countCpus(const std::string& cpulist) {
  int count = 0;
  std::stringstream in(cpulist);
  std::string range;
  while (std::getline(in, range, ',')) {
    int lo = 0, hi = 0;
    if (std::sscanf(range.c_str(), "%d-%d", &lo, &hi) == 2) {
      count += hi - lo + 1;
    } else if (std::sscanf(range.c_str(), "%d", &lo) == 1) {
      ++count;
    }
  }
  return count;
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      std::string model = line.substr(line.find(':') + 1);
      while (!model.empty() && model.front() == ' ') model.erase(model.begin());
      return fileSafe(model);
    }
  }
  return "";
}

// The NIC node for `address`: the one hwloc added, or a new one under its CPU.
Node* nicFor(HostKind* host, const std::string& address, const std::string& name) {
  for (Node& node : host->nodes) {
    if (node.type == NodeType::kNic && !address.empty() && node.busId == address) return &node;
  }
  Node nic;
  nic.type = NodeType::kNic;
  nic.name = fileSafe(name);
  if (host->find(nic.name) >= 0) nic.name = "nic" + std::to_string(host->nodes.size());
  nic.busId = address;
  nic.nicGBps = kAssumedNicGBps;
  host->nodes.push_back(nic);
  Link link;
  link.a = cpuNodeFor(*host, address.empty() ? 0 : numaOfPci(address));
  link.b = static_cast<int>(host->nodes.size()) - 1;
  link.type = LinkType::kPcie;
  link.gbps = kAssumedNicGBps;  // raised below once the port speed is known
  host->links.push_back(link);
  return &host->nodes.back();
}

void setSpeed(HostKind* host, Node* nic, double gbps) {
  nic->nicGBps = gbps;
  const int index = static_cast<int>(nic - host->nodes.data());
  for (Link& link : host->links) {
    if ((link.a == index || link.b == index) && link.gbps < gbps) link.gbps = gbps;
  }
}

}  // namespace

void addCpusFromSysfs(HostKind* host, std::vector<std::string>* notes) {
  std::error_code ec;
  for (int numa = 0; numa < 4096; ++numa) {
    fs::path dir = "/sys/devices/system/node/node" + std::to_string(numa);
    if (!fs::exists(dir, ec)) continue;
    Node cpu;
    cpu.type = NodeType::kCpu;
    cpu.name = "cpu" + std::to_string(numa);
    cpu.numa = numa;
    cpu.cores = countCpus(readLine(dir / "cpulist"));
    if (cpu.cores > 0) host->nodes.push_back(cpu);
  }
  if (host->nodesOf(NodeType::kCpu).empty()) {
    Node cpu;
    cpu.type = NodeType::kCpu;
    cpu.name = "cpu0";
    cpu.numa = 0;
    long online = ::sysconf(_SC_NPROCESSORS_ONLN);
    cpu.cores = online > 0 ? static_cast<int>(online) : 1;
    host->nodes.push_back(cpu);
    notes->push_back("sysfs: no NUMA nodes listed; one CPU node for the whole machine");
  }
}

void linkCpuNodes(HostKind* host, std::vector<std::string>* notes) {
  std::vector<int> cpus = host->nodesOf(NodeType::kCpu);
  const std::string model = cpuModel();
  for (int cpu : cpus) host->nodes[cpu].model = model;
  for (size_t i = 1; i < cpus.size(); ++i) {
    host->links.push_back({cpus[i - 1], cpus[i], LinkType::kCpuLink, kAssumedNumaLinkGBps});
  }
  if (cpus.size() > 1) notes->push_back("sysfs: NUMA link bandwidth assumed 20 GB/s");
}

void addNicsFromSysfs(HostKind* host, std::vector<std::string>* notes) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/class/net", ec)) {
    const std::string name = entry.path().filename().string();
    if (!fs::exists(entry.path() / "device", ec)) continue;  // lo, bridges, ifb, veth
    const std::string address = pciAddressOf(entry.path() / "device");
    Node* nic = nicFor(host, address, name);
    // Take the interface's name unless another node has it (names must stay unique).
    const int taken = host->find(fileSafe(name));
    if (taken < 0 || &host->nodes[taken] == nic) nic->name = fileSafe(name);
    std::string speed = readLine(entry.path() / "speed");
    long mbps = speed.empty() ? -1 : std::strtol(speed.c_str(), nullptr, 10);
    if (mbps > 0) {
      setSpeed(host, nic, static_cast<double>(mbps) / 8000.0);
    } else {
      setSpeed(host, nic, kAssumedNicGBps);
      notes->push_back("sysfs: " + name + " reports no speed (virtual NIC?); assumed 10 Gb/s");
    }
  }
  for (const auto& entry : fs::directory_iterator("/sys/class/infiniband", ec)) {
    const std::string name = entry.path().filename().string();
    const std::string address = pciAddressOf(entry.path() / "device");
    Node* nic = nicFor(host, address, name);
    double gbits = std::atof(readLine(entry.path() / "ports/1/rate").c_str());  // "200 Gb/sec"
    if (gbits > 0) setSpeed(host, nic, gbits / 8.0);
    if (nic->model.empty()) nic->model = fileSafe("rdma-" + name);
  }
}

}  // namespace braid::topo::detail
