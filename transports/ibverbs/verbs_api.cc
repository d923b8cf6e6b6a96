// dlopen of libibverbs.so.1 (see verbs_api.h).
#include "transports/ibverbs/verbs_api.h"

#include <dlfcn.h>

#include <mutex>

namespace braid::transport::ib {
namespace {

struct Loaded {
  VerbsApi api;
  bool ok = false;
  std::string why;
};

template <typename Fn>
bool bind(void* lib, const char* symbol, Fn* slot, std::string* why) {
  void* p = ::dlsym(lib, symbol);
  if (p == nullptr) {
    *why = std::string("libibverbs.so.1 has no ") + symbol;
    return false;
  }
  *slot = reinterpret_cast<Fn>(p);
  return true;
}

Loaded load() {
  Loaded l;
  // Kept open for the life of the process: QPs and MRs outlive any one communicator's
  // view of the table, and providers loaded by libibverbs must never be unloaded.
  void* lib = ::dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = ::dlerror();
    l.why = std::string(
                "cannot load libibverbs.so.1 (install rdma-core's libibverbs1 and "
                "ibverbs-providers): ") +
            (err ? err : "unknown error");
    return l;
  }
  VerbsApi& a = l.api;
  std::string* w = &l.why;
  l.ok =
      bind(lib, "ibv_get_device_list", &a.getDeviceList, w) &&
      bind(lib, "ibv_free_device_list", &a.freeDeviceList, w) &&
      bind(lib, "ibv_get_device_name", &a.getDeviceName, w) &&
      bind(lib, "ibv_open_device", &a.openDevice, w) &&
      bind(lib, "ibv_close_device", &a.closeDevice, w) &&
      bind(lib, "ibv_query_device", &a.queryDevice, w) &&
      bind(lib, "ibv_query_port", &a.queryPort, w) && bind(lib, "ibv_query_gid", &a.queryGid, w) &&
      bind(lib, "ibv_alloc_pd", &a.allocPd, w) && bind(lib, "ibv_dealloc_pd", &a.deallocPd, w) &&
      bind(lib, "ibv_reg_mr", &a.regMr, w) && bind(lib, "ibv_dereg_mr", &a.deregMr, w) &&
      bind(lib, "ibv_create_comp_channel", &a.createCompChannel, w) &&
      bind(lib, "ibv_destroy_comp_channel", &a.destroyCompChannel, w) &&
      bind(lib, "ibv_create_cq", &a.createCq, w) && bind(lib, "ibv_destroy_cq", &a.destroyCq, w) &&
      bind(lib, "ibv_get_cq_event", &a.getCqEvent, w) &&
      bind(lib, "ibv_ack_cq_events", &a.ackCqEvents, w) &&
      bind(lib, "ibv_create_qp", &a.createQp, w) && bind(lib, "ibv_modify_qp", &a.modifyQp, w) &&
      bind(lib, "ibv_destroy_qp", &a.destroyQp, w) &&
      bind(lib, "ibv_wc_status_str", &a.wcStatusStr, w);
  // Optional: GPUDirect through dma-buf (gdr.cc falls back without it).
  a.regDmabufMr = reinterpret_cast<decltype(a.regDmabufMr)>(::dlsym(lib, "ibv_reg_dmabuf_mr"));
  return l;
}

}  // namespace

const VerbsApi* verbsApi(std::string* why) {
  static const Loaded loaded = load();  // C++ guarantees one thread-safe initialization
  if (!loaded.ok) {
    if (why != nullptr) *why = loaded.why;
    return nullptr;
  }
  return &loaded.api;
}

}  // namespace braid::transport::ib
