// Collectives, point-to-point and groups: each call becomes an Op that is
// validated, then run at once or queued in the thread's group.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/guard.h"
#include "comm/device_path.h"
#include "comm/group.h"
#include "comm/op.h"
#include "core/device_memory.h"
#include "core/types.h"

using braid::Op;
using braid::OpKind;
using braid::Status;
using braid::api::guard;
using braid::coll::CollKind;

namespace {

// AllToAllv's four arrays, one entry per rank of the communicator.
struct VectorArgs {
  const size_t* sendCounts;
  const size_t* sendDispls;
  const size_t* recvCounts;
  const size_t* recvDispls;
};

Status copyVectors(Op& op, const VectorArgs& v) {
  const char* names[] = {"sendcounts", "sdispls", "recvcounts", "rdispls"};
  const size_t* arrays[] = {v.sendCounts, v.sendDispls, v.recvCounts, v.recvDispls};
  for (int i = 0; i < 4; ++i) {
    if (arrays[i] == nullptr) {
      return braid::invalidArgument(std::string(op.apiName) + ": " + names[i] + " is NULL");
    }
  }
  const size_t n = op.comm->nranks();
  op.sendCounts.assign(v.sendCounts, v.sendCounts + n);
  op.sendDispls.assign(v.sendDispls, v.sendDispls + n);
  op.recvCounts.assign(v.recvCounts, v.recvCounts + n);
  op.recvDispls.assign(v.recvDispls, v.recvDispls + n);
  return Status::ok();
}

bool reduces(const Op& op) {
  return op.kind == OpKind::kCollective &&
         (op.coll == CollKind::kAllReduce || op.coll == CollKind::kReduce ||
          op.coll == CollKind::kReduceScatter);
}

// An operator of braidRedOpCreatePreMulSum on this communicator: the op becomes a sum, and
// *scale says what to multiply the input by before it runs. Other values are left for
// validate() to refuse.
Status resolveUserOp(Op& op, braid::Comm& comm, std::optional<braid::PreMulSum>* scale) {
  if (!reduces(op) || (op.op >= 0 && op.op < braidNumOps)) return Status::ok();
  std::optional<braid::PreMulSum> user = comm.userOps().find(op.op);
  if (!user) return Status::ok();
  if (user->type != op.type) {
    return braid::invalidArgument(std::string(op.apiName) + ": op " + std::to_string(int(op.op)) +
                                  " was created for " + braid::typeName(user->type) +
                                  " but datatype is " + braid::typeName(op.type));
  }
  op.op = braidSum;
  *scale = user;
  return Status::ok();
}

// Replaces op.send with a scaled copy the op keeps alive (until a group's end, if queued).
void scaleInput(Op& op, const braid::PreMulSum& scale) {
  const size_t bytes = braid::bufferBytes(op).send;
  if (bytes == 0) return;
  auto copy = std::shared_ptr<uint8_t[]>(new uint8_t[bytes]);
  braid::scaleElements(scale, op.send, copy.get(), bytes / braid::typeSize(op.type));
  op.send = copy.get();
  op.scaledInput = std::shared_ptr<void>(copy, copy.get());
}

Status runOrQueue(Op& op, braid::Comm& comm, braidStream_t stream, const VectorArgs* vectors) {
  op.comm = &comm;
  if (vectors != nullptr) BRAID_RETURN_IF_ERROR(copyVectors(op, *vectors));
  const bool onDevice = braid::onDevicePath(op);  // device buffers on a device comm
  if (stream != nullptr && !onDevice) {
    return braid::invalidUsage(std::string(op.apiName) +
                               ": stream is not NULL, but this build runs host buffers only "
                               "(device buffers and CUDA streams arrive with the CUDA path)");
  }
  // As in NCCL, a rejected call leaves the communicator usable and sends
  // nothing; a peer that entered the collective fails at its deadline.
  std::optional<braid::PreMulSum> scale;
  BRAID_RETURN_IF_ERROR(resolveUserOp(op, comm, &scale));
  BRAID_RETURN_IF_ERROR(braid::validate(op));
  BRAID_RETURN_IF_ERROR(op.comm->usable(op.apiName));
  if (scale) {
    if (onDevice) {
      return braid::invalidUsage(std::string(op.apiName) +
                                 ": operators of braidRedOpCreatePreMulSum take host buffers "
                                 "only in this build");
    }
    scaleInput(op, *scale);
  }
  if (onDevice) {
    // NCCL binds a device at init; braid at the first device-buffer call (device_path.h).
    if (comm.device() < 0) comm.setDevice(braid::deviceOrdinal(op.send ? op.send : op.recv));
    return braid::submitOnDevice(std::move(op), stream);
  }
  return braid::submit(std::move(op));
}

braidResult_t enqueue(Op op, braidComm_t comm, braidStream_t stream,
                      const VectorArgs* vectors = nullptr) {
  braid::Lease lease(comm);  // held until the error is recorded
  return guard(lease.comm(), [&]() -> Status {
    Status s = lease.comm() == nullptr ? lease.error(op.apiName)
                                       : runOrQueue(op, *lease.comm(), stream, vectors);
    // Inside a group, as in NCCL, a rejected call fails braidGroupEnd and drops the group.
    if (!s.isOk()) braid::failGroup(s);
    return s;
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

braidResult_t braidBcast(void* buff, size_t count, braidDataType_t datatype, int root,
                         braidComm_t comm, braidStream_t stream) {
  Op o = collective(CollKind::kBroadcast, "braidBcast", buff, buff, count, datatype);
  o.root = root;
  return enqueue(std::move(o), comm, stream);
}

braidResult_t braidRedOpCreatePreMulSum(braidRedOp_t* op, void* scalar, braidDataType_t datatype,
                                        braidScalarResidence_t residence, braidComm_t comm) {
  return braid::api::guardComm(comm, "braidRedOpCreatePreMulSum", [&](braid::Comm& c) -> Status {
    const char* api = "braidRedOpCreatePreMulSum";
    if (op == nullptr) return braid::invalidArgument(std::string(api) + ": op is NULL");
    if (scalar == nullptr) return braid::invalidArgument(std::string(api) + ": scalar is NULL");
    if (!braid::isValidType(datatype)) {
      return braid::invalidArgument(std::string(api) + ": datatype " +
                                    std::to_string(int(datatype)) + " is not a braidDataType_t");
    }
    if (residence == braidScalarDevice) {
      return braid::invalidUsage(std::string(api) +
                                 ": a scalar in device memory (braidScalarDevice) needs the "
                                 "device path; pass braidScalarHostImmediate");
    }
    if (residence != braidScalarHostImmediate) {
      return braid::invalidArgument(std::string(api) + ": residence " +
                                    std::to_string(int(residence)) +
                                    " is not a braidScalarResidence_t");
    }
    BRAID_ASSIGN_OR_RETURN(*op, c.userOps().create(datatype, scalar));
    return Status::ok();
  });
}

braidResult_t braidRedOpDestroy(braidRedOp_t op, braidComm_t comm) {
  return braid::api::guardComm(comm, "braidRedOpDestroy",
                               [&](braid::Comm& c) { return c.userOps().destroy(op); });
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
  const VectorArgs vectors{sendcounts, sdispls, recvcounts, rdispls};
  return enqueue(std::move(o), comm, stream, &vectors);
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

braidResult_t braidGroupSimulateEnd(braidSimInfo_t* simInfo) {
  return guard(nullptr, [&]() -> Status {
    if (simInfo == nullptr) {
      return braid::invalidArgument("braidGroupSimulateEnd: simInfo is NULL");
    }
    // The fields read and written must exist in the caller's struct; any later release
    // keeps them at these offsets.
    const size_t needed = offsetof(braidSimInfo_t, estimatedTime) + sizeof(float);
    if (simInfo->magic != BRAID_SIM_INFO_MAGIC || simInfo->size < needed ||
        simInfo->version < BRAID_VERSION(0, 1, 0)) {
      return braid::invalidArgument(
          "braidGroupSimulateEnd: simInfo was not set up with BRAID_SIM_INFO_INITIALIZER "
          "(size " +
          std::to_string(simInfo->size) + ", magic " + std::to_string(simInfo->magic) +
          ", version " + std::to_string(simInfo->version) + ")");
    }
    double us = 0;
    BRAID_RETURN_IF_ERROR(braid::groupSimulateEnd(&us));
    simInfo->estimatedTime = static_cast<float>(us);
    return Status::ok();
  });
}

}  // extern "C"
