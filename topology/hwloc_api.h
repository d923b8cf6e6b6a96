// The few hwloc functions braid uses, loaded with dlopen (libhwloc.so.15), so that libbraid
// has no link-time dependency on hwloc. Only for files compiled with BRAID_HAVE_HWLOC (they
// need hwloc.h for the object layout); the loaded library must have the header's ABI major.
#pragma once

#include <dlfcn.h>
#include <hwloc.h>

#include <string>

namespace braid::topo::detail {

struct HwlocApi {
  void* handle = nullptr;
  unsigned (*apiVersion)() = nullptr;
  int (*init)(hwloc_topology_t*) = nullptr;
  int (*setIoFilter)(hwloc_topology_t, enum hwloc_type_filter_e) = nullptr;
  int (*load)(hwloc_topology_t) = nullptr;
  void (*destroy)(hwloc_topology_t) = nullptr;
  hwloc_obj_t (*objByDepth)(hwloc_topology_t, int, unsigned) = nullptr;
  int (*weight)(hwloc_const_bitmap_t) = nullptr;
  int (*first)(hwloc_const_bitmap_t) = nullptr;
  int (*typeDepth)(hwloc_topology_t, hwloc_obj_type_t) = nullptr;
  unsigned (*objCount)(hwloc_topology_t, int) = nullptr;
  int (*isSet)(hwloc_const_bitmap_t, unsigned) = nullptr;

  ~HwlocApi() {
    if (handle) dlclose(handle);
  }
  template <typename F>
  bool bind(F* fn, const char* name) {
    *fn = reinterpret_cast<F>(dlsym(handle, name));
    return *fn != nullptr;
  }
  bool open(std::string* why) {
    handle = dlopen("libhwloc.so.15", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      *why = "libhwloc.so.15 not found";
      return false;
    }
    if (!bind(&apiVersion, "hwloc_get_api_version") || !bind(&init, "hwloc_topology_init") ||
        !bind(&setIoFilter, "hwloc_topology_set_io_types_filter") ||
        !bind(&load, "hwloc_topology_load") || !bind(&destroy, "hwloc_topology_destroy") ||
        !bind(&objByDepth, "hwloc_get_obj_by_depth") || !bind(&weight, "hwloc_bitmap_weight") ||
        !bind(&first, "hwloc_bitmap_first") || !bind(&typeDepth, "hwloc_get_type_depth") ||
        !bind(&objCount, "hwloc_get_nbobjs_by_depth") || !bind(&isSet, "hwloc_bitmap_isset")) {
      *why = "libhwloc.so.15 lacks a needed symbol";
      return false;
    }
    if ((apiVersion() >> 16) != (HWLOC_API_VERSION >> 16)) {
      *why = "libhwloc ABI differs from the header braid was built with";
      return false;
    }
    return true;
  }
};

}  // namespace braid::topo::detail
