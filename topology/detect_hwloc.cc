// Detection from hwloc: NUMA nodes and the PCIe tree above GPUs and NICs.
//
// hwloc is compiled against (its header gives the object layout) but loaded with
// dlopen, so libbraid has no link-time dependency on it and a machine without
// libhwloc.so.15 still detects through sysfs. The loaded library must have the
// header's ABI major (hwloc_get_api_version() >> 16), or its objects are not read.
//
// Walk: NUMA nodes hang from normal objects as memory children and become CPU nodes;
// I/O children hang from the normal object whose NUMA node they are near. Host
// bridges are skipped (the CPU node stands for them); a PCI bridge with a GPU or a NIC
// below becomes a "pci" node; GPUs (vendor NVIDIA, class display) and NICs (class
// network) become nodes linked to their parent at hwloc's link speed.
#include "topology/detect.h"

#ifdef BRAID_HAVE_HWLOC

#include <hwloc.h>

#include <cstdio>

#include "topology/hwloc_api.h"

namespace braid::topo::detail {
namespace {

constexpr unsigned kNvidiaVendor = 0x10de;
constexpr double kUnknownPcieGBps = 12;  // hwloc reports 0 when it cannot read the link

class Walker {
 public:
  Walker(const HwlocApi& api, HostKind* host) : api_(api), host_(host) {}

  void addNumaNodes(hwloc_obj_t obj) {
    for (hwloc_obj_t m = obj->memory_first_child; m; m = m->next_sibling) {
      if (m->type != HWLOC_OBJ_NUMANODE) continue;
      Node cpu;
      cpu.type = NodeType::kCpu;
      cpu.numa = static_cast<int>(m->os_index);
      cpu.name = "cpu" + std::to_string(cpu.numa);
      cpu.cores = m->cpuset ? api_.weight(m->cpuset) : 0;
      if (cpu.cores <= 0) cpu.cores = 1;
      host_->nodes.push_back(cpu);
    }
    for (hwloc_obj_t c = obj->first_child; c; c = c->next_sibling) addNumaNodes(c);
  }

  void addIo(hwloc_obj_t obj) {
    for (hwloc_obj_t io = obj->io_first_child; io; io = io->next_sibling) {
      int numa = obj->nodeset ? api_.first(obj->nodeset) : 0;
      addIoObject(io, cpuNodeFor(*host_, numa < 0 ? 0 : numa));
    }
    for (hwloc_obj_t c = obj->first_child; c; c = c->next_sibling) addIo(c);
  }

 private:
  static std::string busId(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci) {
    char text[16];
    std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", pci.domain, pci.bus, pci.dev, pci.func);
    return text;
  }
  static bool isGpu(hwloc_obj_t o) {
    return o->type == HWLOC_OBJ_PCI_DEVICE && o->attr->pcidev.vendor_id == kNvidiaVendor &&
           (o->attr->pcidev.class_id >> 8) == 0x03;
  }
  static bool isNic(hwloc_obj_t o) {
    return o->type == HWLOC_OBJ_PCI_DEVICE && (o->attr->pcidev.class_id >> 8) == 0x02;
  }
  static bool interesting(hwloc_obj_t o) {
    if (isGpu(o) || isNic(o)) return true;
    for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
      if (interesting(c)) return true;
    }
    return false;
  }

  int addNode(NodeType type, const std::string& prefix, const std::string& bus, int parent,
              double gbps) {
    Node node;
    node.type = type;
    node.name = prefix + std::to_string(host_->nodesOf(type).size());
    node.busId = bus;
    if (type == NodeType::kNic) node.nicGBps = 1.25;  // sysfs sets the real speed
    host_->nodes.push_back(node);
    int index = static_cast<int>(host_->nodes.size()) - 1;
    host_->links.push_back({parent, index, LinkType::kPcie, gbps > 0 ? gbps : kUnknownPcieGBps});
    return index;
  }

  void addIoObject(hwloc_obj_t o, int parent) {
    if (!interesting(o)) return;
    int here = parent;
    if (o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI) {
      const hwloc_obj_attr_u::hwloc_pcidev_attr_s& up = o->attr->bridge.upstream.pci;
      here = addNode(NodeType::kPciSwitch, "sw", busId(up), parent, up.linkspeed);
    } else if (isGpu(o)) {
      here =
          addNode(NodeType::kGpu, "gpu", busId(o->attr->pcidev), parent, o->attr->pcidev.linkspeed);
    } else if (isNic(o)) {
      here =
          addNode(NodeType::kNic, "nic", busId(o->attr->pcidev), parent, o->attr->pcidev.linkspeed);
    }
    for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) addIoObject(c, here);
  }

  const HwlocApi& api_;
  HostKind* host_;
};

}  // namespace

bool addFromHwloc(HostKind* host, std::vector<std::string>* notes) {
  HwlocApi api;
  std::string why;
  if (!api.open(&why)) {
    notes->push_back("hwloc: " + why + "; using sysfs");
    return false;
  }
  hwloc_topology_t topology = nullptr;
  if (api.init(&topology) != 0) {
    notes->push_back("hwloc: hwloc_topology_init failed; using sysfs");
    return false;
  }
  api.setIoFilter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (api.load(topology) != 0) {
    api.destroy(topology);
    notes->push_back("hwloc: hwloc_topology_load failed; using sysfs");
    return false;
  }
  Walker walker(api, host);
  hwloc_obj_t root = api.objByDepth(topology, 0, 0);
  walker.addNumaNodes(root);
  if (host->nodesOf(NodeType::kCpu).empty()) {
    api.destroy(topology);
    notes->push_back("hwloc: no NUMA node found; using sysfs");
    return false;
  }
  walker.addIo(root);
  api.destroy(topology);
  return true;
}

}  // namespace braid::topo::detail

#else  // !BRAID_HAVE_HWLOC

namespace braid::topo::detail {
bool addFromHwloc(HostKind*, std::vector<std::string>* notes) {
  notes->push_back("hwloc: not built in (BRAID_WITH_HWLOC=OFF or libhwloc-dev absent)");
  return false;
}
}  // namespace braid::topo::detail

#endif
