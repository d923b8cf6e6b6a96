// cpuPlacesFromHwloc: each CPU's L3 object (logical index) and NUMA node (OS index) from
// hwloc, loaded with dlopen (hwloc_api.h).
#include "topology/cache_domain.h"

#ifdef BRAID_HAVE_HWLOC

#include "topology/hwloc_api.h"

namespace braid::topo::detail {
namespace {

// Sets `field` of every place whose CPU is in an object of `depth` to `value(obj)`.
template <typename Value>
void markObjects(const HwlocApi& api, hwloc_topology_t topology, int depth, CpuPlaces* places,
                 int CpuPlace::*field, Value value) {
  const unsigned count = api.objCount(topology, depth);
  for (unsigned i = 0; i < count; ++i) {
    hwloc_obj_t obj = api.objByDepth(topology, depth, i);
    if (obj == nullptr || obj->cpuset == nullptr) continue;
    for (CpuPlace& place : places->cpus) {
      if (api.isSet(obj->cpuset, static_cast<unsigned>(place.cpu))) place.*field = value(obj);
    }
  }
}

}  // namespace

bool cpuPlacesFromHwloc(CpuPlaces* places) {
  HwlocApi api;
  std::string why;
  if (!api.open(&why)) return false;
  hwloc_topology_t topology = nullptr;
  if (api.init(&topology) != 0) return false;
  if (api.load(topology) != 0) {
    api.destroy(topology);
    return false;
  }
  // The online CPUs: the processing units.
  const int puDepth = api.typeDepth(topology, HWLOC_OBJ_PU);
  const int l3Depth = api.typeDepth(topology, HWLOC_OBJ_L3CACHE);
  if (puDepth < 0 || l3Depth < 0) {  // no L3 level known: let sysfs try
    api.destroy(topology);
    return false;
  }
  CpuPlaces found;
  found.source = "hwloc";
  for (unsigned i = 0; i < api.objCount(topology, puDepth); ++i) {
    hwloc_obj_t pu = api.objByDepth(topology, puDepth, i);
    if (pu != nullptr) found.cpus.push_back({static_cast<int>(pu->os_index), -1, -1});
  }
  markObjects(api, topology, l3Depth, &found, &CpuPlace::l3,
              [](hwloc_obj_t o) { return static_cast<int>(o->logical_index); });
  markObjects(api, topology, api.typeDepth(topology, HWLOC_OBJ_NUMANODE), &found, &CpuPlace::numa,
              [](hwloc_obj_t o) { return static_cast<int>(o->os_index); });
  api.destroy(topology);
  if (found.cpus.empty()) return false;
  *places = found;
  return true;
}

}  // namespace braid::topo::detail

#else  // !BRAID_HAVE_HWLOC

namespace braid::topo::detail {
bool cpuPlacesFromHwloc(CpuPlaces*) { return false; }
}  // namespace braid::topo::detail

#endif
