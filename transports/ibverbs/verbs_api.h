// libibverbs, loaded at run time: one table of the entry points braid calls.
//
// braid never links libibverbs: a machine without rdma-core still loads the
// library and simply has no ib transport. The hot-path verbs (post_send,
// post_recv, poll_cq, req_notify_cq) are inline in <infiniband/verbs.h> and go
// through the device's ops table, so they need no entry here. Tests build a
// table of fakes (GPUDirect decisions) and hand it in instead.
#pragma once

#include <infiniband/verbs.h>

#include <string>

namespace braid::transport::ib {

struct VerbsApi {
  ibv_device** (*getDeviceList)(int* count) = nullptr;
  void (*freeDeviceList)(ibv_device** list) = nullptr;
  const char* (*getDeviceName)(ibv_device* device) = nullptr;
  ibv_context* (*openDevice)(ibv_device* device) = nullptr;
  int (*closeDevice)(ibv_context* context) = nullptr;
  int (*queryDevice)(ibv_context* context, ibv_device_attr* attr) = nullptr;
  // The exported symbol behind the ibv_query_port macro; fills the attributes it knows.
  int (*queryPort)(ibv_context* context, uint8_t port, ibv_port_attr* attr) = nullptr;
  int (*queryGid)(ibv_context* context, uint8_t port, int index, ibv_gid* gid) = nullptr;
  ibv_pd* (*allocPd)(ibv_context* context) = nullptr;
  int (*deallocPd)(ibv_pd* pd) = nullptr;
  ibv_mr* (*regMr)(ibv_pd* pd, void* addr, size_t length, int access) = nullptr;
  // Null where libibverbs predates dma-buf (rdma-core < 34).
  ibv_mr* (*regDmabufMr)(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd,
                         int access) = nullptr;
  int (*deregMr)(ibv_mr* mr) = nullptr;
  ibv_comp_channel* (*createCompChannel)(ibv_context* context) = nullptr;
  int (*destroyCompChannel)(ibv_comp_channel* channel) = nullptr;
  ibv_cq* (*createCq)(ibv_context* context, int cqe, void* cqContext, ibv_comp_channel* channel,
                      int compVector) = nullptr;
  int (*destroyCq)(ibv_cq* cq) = nullptr;
  int (*getCqEvent)(ibv_comp_channel* channel, ibv_cq** cq, void** cqContext) = nullptr;
  void (*ackCqEvents)(ibv_cq* cq, unsigned int count) = nullptr;
  ibv_qp* (*createQp)(ibv_pd* pd, ibv_qp_init_attr* attr) = nullptr;
  int (*modifyQp)(ibv_qp* qp, ibv_qp_attr* attr, int mask) = nullptr;
  int (*destroyQp)(ibv_qp* qp) = nullptr;
  const char* (*wcStatusStr)(ibv_wc_status status) = nullptr;
};

/// The process's libibverbs table, loaded on first use (thread-safe). Null when
/// libibverbs.so.1 cannot be loaded or lacks an entry point; *why then says which.
const VerbsApi* verbsApi(std::string* why);

}  // namespace braid::transport::ib
