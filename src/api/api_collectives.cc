// Collectives, point-to-point and groups: each call becomes an Op that is
// validated, then run at once or queued in the thread's group.
#include <vector>

#include "api/guard.h"
#include "comm/device_path.h"
#include "comm/group.h"
#include "comm/op.h"

using braid::Op;
using braid::OpKind;
using braid::Status;
using braid::api::guard;
using braid::api::toComm;
using braid::coll::CollKind;

namespace {

braidResult_t enqueue(Op op, braidComm_t comm, braidStream_t stream) {
  return guard(toComm(comm), [&]() -> Status {
    if (comm == nullptr) return braid::invalidArgument(std::string(op.apiName) + ": comm is NULL");
    op.comm = toComm(comm);
    const bool onDevice = braid::onDevicePath(op);  // device buffers on a device comm
    if (stream != nullptr && !onDevice) {
      return braid::invalidUsage(std::string(op.apiName) +
                                 ": stream is not NULL, but this build runs host buffers only "
                                 "(device buffers and CUDA streams arrive with the CUDA path)");
    }
    // As in NCCL, a rejected call leaves the communicator usable and sends
    // nothing; a peer that entered the collective fails at its deadline.
    BRAID_RETURN_IF_ERROR(braid::validate(op));
    BRAID_RETURN_IF_ERROR(op.comm->health());
    if (onDevice) return braid::submitOnDevice(std::move(op), stream);
    return braid::submit(std::move(op));
  });
}

Op collective(CollKind kind, const char* api, const void* send, void* recv, size_t count,
              braidDataType_t type) {
  Op op;
  op.kind = OpKind::kCollective;
  op.coll = kind;
  op.apiName = api;
  op.send = send;
  op.recv = recv;
  op.count = count;
  op.type = type;
  return op;
}

}  // namespace

extern "C" {

braidResult_t braidAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                             braidDataType_t datatype, braidRedOp_t op, braidComm_t comm,
                             braidStream_t stream) {
  Op o = collective(CollKind::kAllReduce, "braidAllReduce", sendbuff, recvbuff, count, datatype);
  o.op = op;
  return enqueue(std::move(o), comm, stream);
}

braidResult_t braidBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                             braidDataType_t datatype, int root, braidComm_t comm,
                             braidStream_t stream) {
  Op o = collective(CollKind::kBroadcast, "braidBroadcast", sendbuff, recvbuff, count, datatype);
  o.root = root;
  return enqueue(std::move(o), comm, stream);
}

braidResult_t braidReduce(const void* sendbuff, void* recvbuff, size_t count,
                          braidDataType_t datatype, braidRedOp_t op, int root, braidComm_t comm,
                          braidStream_t stream) {
  Op o = collective(CollKind::kReduce, "braidReduce", sendbuff, recvbuff, count, datatype);
  o.op = op;
  o.root = root;
  return enqueue(std::move(o), comm, stream);
}

braidResult_t braidAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                             braidDataType_t datatype, braidComm_t comm, braidStream_t stream) {
  return enqueue(
      collective(CollKind::kAllGather, "braidAllGather", sendbuff, recvbuff, sendcount, datatype),
      comm, stream);
}

braidResult_t braidReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                 braidDataType_t datatype, braidRedOp_t op, braidComm_t comm,
                                 braidStream_t stream) {
  Op o = collective(CollKind::kReduceScatter, "braidReduceScatter", sendbuff, recvbuff, recvcount,
                    datatype);
  o.op = op;
  return enqueue(std::move(o), comm, stream);
}

braidResult_t braidAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                            braidDataType_t datatype, braidComm_t comm, braidStream_t stream) {
  return enqueue(
      collective(CollKind::kAllToAll, "braidAllToAll", sendbuff, recvbuff, count, datatype), comm,
      stream);
}

braidResult_t braidAllToAllv(const void* sendbuff, const size_t sendcounts[],
                             const size_t sdispls[], void* recvbuff, const size_t recvcounts[],
                             const size_t rdispls[], braidDataType_t datatype, braidComm_t comm,
                             braidStream_t stream) {
  Op o = collective(CollKind::kAllToAllv, "braidAllToAllv", sendbuff, recvbuff, 0, datatype);
  if (comm != nullptr && sendcounts && sdispls && recvcounts && rdispls) {
    size_t n = toComm(comm)->nranks();
    o.sendCounts.assign(sendcounts, sendcounts + n);
    o.sendDispls.assign(sdispls, sdispls + n);
    o.recvCounts.assign(recvcounts, recvcounts + n);
    o.recvDispls.assign(rdispls, rdispls + n);
  }
  return enqueue(std::move(o), comm, stream);
}

braidResult_t braidGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                          braidDataType_t datatype, int root, braidComm_t comm,
                          braidStream_t stream) {
  Op o = collective(CollKind::kGather, "braidGather", sendbuff, recvbuff, sendcount, datatype);
  o.root = root;
  return enqueue(std::move(o), comm, stream);
}

braidResult_t braidScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                           braidDataType_t datatype, int root, braidComm_t comm,
                           braidStream_t stream) {
  Op o = collective(CollKind::kScatter, "braidScatter", sendbuff, recvbuff, recvcount, datatype);
  o.root = root;
  return enqueue(std::move(o), comm, stream);
}

braidResult_t braidSend(const void* sendbuff, size_t count, braidDataType_t datatype, int peer,
                        braidComm_t comm, braidStream_t stream) {
  Op o = collective(CollKind::kAllReduce, "braidSend", sendbuff, nullptr, count, datatype);
  o.kind = OpKind::kSend;
  o.peer = peer;
  return enqueue(std::move(o), comm, stream);
}

braidResult_t braidRecv(void* recvbuff, size_t count, braidDataType_t datatype, int peer,
                        braidComm_t comm, braidStream_t stream) {
  Op o = collective(CollKind::kAllReduce, "braidRecv", nullptr, recvbuff, count, datatype);
  o.kind = OpKind::kRecv;
  o.peer = peer;
  return enqueue(std::move(o), comm, stream);
}

braidResult_t braidBarrier(braidComm_t comm, braidStream_t stream) {
  return enqueue(collective(CollKind::kBarrier, "braidBarrier", nullptr, nullptr, 0, braidUint8),
                 comm, stream);
}

braidResult_t braidGroupStart(void) {
  return guard(nullptr, [] { return braid::groupStart(); });
}

braidResult_t braidGroupEnd(void) {
  return guard(nullptr, [] { return braid::groupEnd(); });
}

}  // extern "C"
