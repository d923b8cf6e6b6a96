// Detection of GPUs (CUDA driver) and of their NVLinks (NVML), both through dlopen.
//
// braid must build and run where no NVIDIA driver exists, so neither library is linked:
// the few entry points used are declared here with the driver's documented C
// signatures and looked up at run time. Absent libraries, no devices or a failing
// call leave the graph without GPUs and add a note.
//
// NVLinks: for every active link of every GPU, NVML names the PCI address at the
// other end. Another GPU means a direct GPU-GPU NVLink; anything else is an NVSwitch
// chip, and all chips become one "nvs" node: a GPU spreads traffic to any peer over all
// its switch links, so they act as one fabric. Links to the same peer are summed; one link carries
// 20 (NVLink 1), 25 (NVLink 2-4) or 50 (NVLink 5) GB/s per direction.
#include <dlfcn.h>

#include <cctype>
#include <map>
#include <utility>

#include "topology/detect.h"

namespace braid::topo::detail {
namespace {

constexpr unsigned kMaxNvLinks = 18;  // NVML_NVLINK_MAX_LINKS as of CUDA 12
constexpr double kDefaultGpuPcieGBps = 24;

struct NvmlPciInfo {  // nvmlPciInfo_t (v2 and later)
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
using NvmlDevice = void*;

class Library {
 public:
  explicit Library(const char* name) : handle_(dlopen(name, RTLD_NOW | RTLD_LOCAL)) {}
  ~Library() {
    if (handle_) dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  bool loaded() const { return handle_ != nullptr; }
  template <typename F>
  F get(const char* name) const {
    return handle_ ? reinterpret_cast<F>(dlsym(handle_, name)) : nullptr;
  }

 private:
  void* handle_;
};

// "00000000:18:00.0" or "0000:18:00.0" -> "0000:18:00.0", lower case.
std::string normalizeBusId(const char* text) {
  std::string s(text);
  if (s.size() > 12) s = s.substr(s.size() - 12);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int findByBus(const HostKind& host, NodeType type, const std::string& bus) {
  for (size_t i = 0; i < host.nodes.size(); ++i) {
    if (host.nodes[i].type == type && host.nodes[i].busId == bus) return static_cast<int>(i);
  }
  return -1;
}

double perLinkGBps(unsigned version) { return version <= 1 ? 20 : version >= 5 ? 50 : 25; }

void addNvLinks(HostKind* host, const std::vector<int>& gpus, std::vector<std::string>* notes) {
  Library nvml("libnvidia-ml.so.1");
  auto init = nvml.get<int (*)()>("nvmlInit_v2");
  auto shutdown = nvml.get<int (*)()>("nvmlShutdown");
  auto byBus = nvml.get<int (*)(const char*, NvmlDevice*)>("nvmlDeviceGetHandleByPciBusId_v2");
  auto state = nvml.get<int (*)(NvmlDevice, unsigned, int*)>("nvmlDeviceGetNvLinkState");
  auto remote =
      nvml.get<int (*)(NvmlDevice, unsigned, NvmlPciInfo*)>("nvmlDeviceGetNvLinkRemotePciInfo_v2");
  auto version = nvml.get<int (*)(NvmlDevice, unsigned, unsigned*)>("nvmlDeviceGetNvLinkVersion");
  if (!init || !shutdown || !byBus || !state || !remote || !version) {
    notes->push_back("nvml: libnvidia-ml.so.1 not found; no NVLink information");
    return;
  }
  if (init() != 0) {
    notes->push_back("nvml: nvmlInit failed; no NVLink information");
    return;
  }
  std::map<std::pair<int, int>, double> summed;  // (gpu node, peer node) -> GB/s
  for (int gpu : gpus) {
    NvmlDevice device = nullptr;
    if (byBus(host->nodes[gpu].busId.c_str(), &device) != 0) continue;
    for (unsigned link = 0; link < kMaxNvLinks; ++link) {
      int active = 0;
      NvmlPciInfo info{};
      unsigned v = 0;
      if (state(device, link, &active) != 0 || !active) continue;
      if (remote(device, link, &info) != 0) continue;
      if (version(device, link, &v) != 0) v = 2;
      std::string bus = normalizeBusId(info.busId);
      int peer = findByBus(*host, NodeType::kGpu, bus);
      if (peer < 0 && !host->nodesOf(NodeType::kNvSwitch).empty()) {
        peer = host->nodesOf(NodeType::kNvSwitch).front();
      }
      if (peer < 0) {
        Node sw;
        sw.type = NodeType::kNvSwitch;
        sw.name = "nvs";
        host->nodes.push_back(sw);
        peer = static_cast<int>(host->nodes.size()) - 1;
      }
      summed[{std::min(gpu, peer), std::max(gpu, peer)}] +=
          perLinkGBps(v) /
          (host->nodes[peer].type == NodeType::kGpu ? 2.0 : 1.0);  // seen from both GPUs
    }
  }
  shutdown();
  for (const auto& [pair, gbps] : summed) {
    host->links.push_back({pair.first, pair.second, LinkType::kNvLink, gbps});
  }
}

}  // namespace

void addGpus(HostKind* host, std::vector<std::string>* notes) {
  Library cuda("libcuda.so.1");
  auto init = cuda.get<int (*)(unsigned)>("cuInit");
  auto count = cuda.get<int (*)(int*)>("cuDeviceGetCount");
  auto get = cuda.get<int (*)(int*, int)>("cuDeviceGet");
  auto name = cuda.get<int (*)(char*, int, int)>("cuDeviceGetName");
  auto bus = cuda.get<int (*)(char*, int, int)>("cuDeviceGetPCIBusId");
  if (!init || !count || !get || !name || !bus) {
    notes->push_back("cuda: libcuda.so.1 not found; no GPUs");
    return;
  }
  int n = 0;
  if (init(0) != 0 || count(&n) != 0 || n == 0) {
    notes->push_back("cuda: the driver reports no usable GPU");
    return;
  }
  std::vector<int> gpus;
  for (int i = 0; i < n; ++i) {
    int device = 0;
    char text[128] = {};
    char address[32] = {};
    if (get(&device, i) != 0 || bus(address, sizeof(address), device) != 0) continue;
    name(text, sizeof(text), device);
    std::string busId = normalizeBusId(address);
    int node = findByBus(*host, NodeType::kGpu, busId);
    if (node < 0) {  // hwloc did not see it: hang it from the first CPU node
      Node gpu;
      gpu.type = NodeType::kGpu;
      gpu.name = "gpu" + std::to_string(host->nodesOf(NodeType::kGpu).size());
      gpu.busId = busId;
      host->nodes.push_back(gpu);
      node = static_cast<int>(host->nodes.size()) - 1;
      host->links.push_back({cpuNodeFor(*host, 0), node, LinkType::kPcie, kDefaultGpuPcieGBps});
    }
    host->nodes[node].model = fileSafe(text);
    gpus.push_back(node);
  }
  addNvLinks(host, gpus, notes);
}

}  // namespace braid::topo::detail
