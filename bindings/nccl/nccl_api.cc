// libnccl.so.2 built from braid: NCCL's host API, each call forwarded to braid's C API.
//
// braid's C API has NCCL's argument order and enum values, so most calls forward one to
// one (ncclComm_t is a braidComm_t, ncclUniqueId a braidUniqueId of the same 128 bytes).
// Calls braid has no counterpart for (windows, signals, the parameter registry, suspend,
// grow) return ncclInvalidUsage with a sentence for ncclGetLastError, so that callers fall
// back. Every function is defined as pnccl<Name> (NCCL's profiling interface) with
// nccl<Name> a weak alias of it, as in NCCL; libnccl.map exports those and nothing else.
#include <strings.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "braid.h"
#include "nccl_abi.h"

namespace braid::nccl {
namespace {

// The NCCL release whose behaviour the drop-in reports (ncclGetVersion): 2.26, the last
// before windows (2.27) and the device API (2.28), which braid has no counterpart for;
// callers that gate features on the version then never try them.
constexpr int kReportedVersion = versionCode(2, 26, 6);

// The drop-in's own refusals; braid's messages come from braidGetLastError.
thread_local std::string refusal;
thread_local bool refusedLast = false;

Result forward(braidResult_t result) {
  refusedLast = false;
  return static_cast<Result>(result);
}

Result refuse(Result code, const std::string& message) {
  refusal = message;
  refusedLast = true;
  return code;
}

Result unmapped(const char* name, const char* what) {
  return refuse(kInvalidUsage, std::string(name) + ": " + what +
                                   " is not available in braid's libnccl.so.2; call the "
                                   "collectives and point-to-point API instead");
}

// NULL is "all defaults". Otherwise the struct must come from NCCL_CONFIG_INITIALIZER; its
// blocking field carries over to braid's config, which *out then points to (NULL: defaults).
Result checkConfig(const void* config, const char* name, braidConfig_t* braid = nullptr,
                   braidConfig_t** out = nullptr) {
  if (out != nullptr) *out = nullptr;
  if (config == nullptr) return kSuccess;
  const auto* c = static_cast<const ConfigPrefix*>(config);
  if (c->magic != kConfigMagic || c->size < offsetof(ConfigPrefix, cgaClusterSize)) {
    return refuse(kInvalidArgument, std::string(name) +
                                        ": config was not set up with NCCL_CONFIG_INITIALIZER "
                                        "(size " +
                                        std::to_string(c->size) + ", magic " +
                                        std::to_string(c->magic) + ")");
  }
  if (braid != nullptr && out != nullptr) {
    *braid = BRAID_CONFIG_INITIALIZER;
    braid->blocking = c->blocking == kConfigUndefInt ? BRAID_CONFIG_UNDEF_INT : c->blocking;
    *out = braid;
  }
  return kSuccess;
}

}  // namespace
}  // namespace braid::nccl

using namespace braid::nccl;

// Defines pnccl<name> and its weak alias nccl<name>, both exported.
#define NCCL_API(ret, name, params)                                                          \
  extern "C" __attribute__((visibility("default"))) ret p##name params;                      \
  extern "C" __attribute__((visibility("default"), weak, alias("p" #name))) ret name params; \
  extern "C" ret p##name params

// ---- Library ----------------------------------------------------------------------------

NCCL_API(Result, ncclGetVersion, (int* version)) {
  if (version == nullptr) return refuse(kInvalidArgument, "ncclGetVersion: version is NULL");
  *version = kReportedVersion;
  return forward(braidSuccess);
}

NCCL_API(const char*, ncclGetErrorString, (Result result)) {
  return braidGetErrorString(static_cast<braidResult_t>(result));
}

NCCL_API(const char*, ncclGetLastError, (braidComm_t comm)) {
  return refusedLast ? refusal.c_str() : braidGetLastError(comm);
}

NCCL_API(void, ncclResetDebugInit, ()) {}  // braid reads BRAID_DEBUG once; nothing to reset

NCCL_API(Result, ncclGetUniqueId, (braidUniqueId * uniqueId)) {
  return forward(braidGetUniqueId(uniqueId));
}

NCCL_API(Result, ncclMemAlloc, (void** ptr, size_t size)) {
  return forward(braidMemAlloc(ptr, size));
}

NCCL_API(Result, ncclMemFree, (void* ptr)) { return forward(braidMemFree(ptr)); }

// ---- Communicators ----------------------------------------------------------------------

NCCL_API(Result, ncclCommInitRank,
         (braidComm_t * comm, int nranks, braidUniqueId commId, int rank)) {
  return forward(braidCommInitRank(comm, nranks, commId, rank));
}

// blocking = 0 gives NCCL's non-blocking init: ncclInProgress, then ncclCommGetAsyncError.
NCCL_API(Result, ncclCommInitRankConfig,
         (braidComm_t * comm, int nranks, braidUniqueId commId, int rank, void* config)) {
  braidConfig_t braid;
  braidConfig_t* mapped = nullptr;
  if (Result r = checkConfig(config, "ncclCommInitRankConfig", &braid, &mapped); r != kSuccess) {
    return r;
  }
  return forward(braidCommInitRankConfig(comm, nranks, commId, rank, mapped));
}

NCCL_API(Result, ncclCommInitRankScalable,
         (braidComm_t * comm, int nranks, int rank, int nId, braidUniqueId* commIds,
          void* config)) {
  braidConfig_t braid;
  braidConfig_t* mapped = nullptr;
  if (Result r = checkConfig(config, "ncclCommInitRankScalable", &braid, &mapped); r != kSuccess) {
    return r;
  }
  return forward(braidCommInitRankScalable(comm, nranks, rank, nId, commIds, mapped));
}

NCCL_API(Result, ncclCommInitAll, (braidComm_t * comms, int ndev, const int* devlist)) {
  return forward(braidCommInitAll(comms, ndev, devlist));
}

NCCL_API(Result, ncclCommFinalize, (braidComm_t comm)) { return forward(braidCommFinalize(comm)); }
NCCL_API(Result, ncclCommDestroy, (braidComm_t comm)) { return forward(braidCommDestroy(comm)); }
NCCL_API(Result, ncclCommAbort, (braidComm_t comm)) { return forward(braidCommAbort(comm)); }

NCCL_API(Result, ncclCommRevoke, (braidComm_t comm, int revokeFlags)) {
  return forward(braidCommRevoke(comm, revokeFlags));
}

NCCL_API(Result, ncclCommSplit,
         (braidComm_t comm, int color, int key, braidComm_t* newcomm, void* config)) {
  if (Result r = checkConfig(config, "ncclCommSplit"); r != kSuccess) return r;
  return forward(braidCommSplit(comm, color, key, newcomm));
}

NCCL_API(Result, ncclCommShrink,
         (braidComm_t comm, int* excludeRanks, int excludeCount, braidComm_t* newcomm, void* config,
          int shrinkFlags)) {
  if (Result r = checkConfig(config, "ncclCommShrink"); r != kSuccess) return r;
  // NCCL_SHRINK_DEFAULT (0) or NCCL_SHRINK_ABORT (1): braid's shrink never uses the old
  // communicator's connections, so both mean the same here.
  if (shrinkFlags != 0 && shrinkFlags != 1) {
    return refuse(kInvalidArgument, "ncclCommShrink: shrinkFlags " + std::to_string(shrinkFlags) +
                                        " is neither NCCL_SHRINK_DEFAULT nor NCCL_SHRINK_ABORT");
  }
  return forward(braidCommShrink(comm, excludeRanks, excludeCount, newcomm));
}

NCCL_API(Result, ncclCommGrow,
         (braidComm_t comm, int nRanks, const braidUniqueId* uniqueId, int rank,
          braidComm_t* newcomm, void* config)) {
  (void)comm, (void)nRanks, (void)uniqueId, (void)rank, (void)newcomm, (void)config;
  return unmapped("ncclCommGrow", "growing a live communicator");
}

NCCL_API(Result, ncclCommGetUniqueId, (braidComm_t comm, braidUniqueId* uniqueId)) {
  (void)comm, (void)uniqueId;
  return unmapped("ncclCommGetUniqueId", "a unique id for ncclCommGrow");
}

NCCL_API(Result, ncclCommGetAsyncError, (braidComm_t comm, Result* asyncError)) {
  return forward(braidCommGetAsyncError(comm, reinterpret_cast<braidResult_t*>(asyncError)));
}
NCCL_API(Result, ncclCommCount, (braidComm_t comm, int* count)) {
  return forward(braidCommCount(comm, count));
}
NCCL_API(Result, ncclCommCuDevice, (braidComm_t comm, int* device)) {
  return forward(braidCommCuDevice(comm, device));
}
NCCL_API(Result, ncclCommUserRank, (braidComm_t comm, int* rank)) {
  return forward(braidCommUserRank(comm, rank));
}

NCCL_API(Result, ncclCommRegister, (braidComm_t comm, void* buff, size_t size, void** handle)) {
  return forward(braidCommRegister(comm, buff, size, handle));
}

NCCL_API(Result, ncclCommDeregister, (braidComm_t comm, void* handle)) {
  return forward(braidCommDeregister(comm, handle));
}

NCCL_API(Result, ncclCommSuspend, (braidComm_t comm, int flags)) {
  (void)comm, (void)flags;
  return unmapped("ncclCommSuspend", "suspending a communicator's memory");
}
NCCL_API(Result, ncclCommResume, (braidComm_t comm)) {
  (void)comm;
  return unmapped("ncclCommResume", "resuming a suspended communicator");
}
NCCL_API(Result, ncclCommMemStats, (braidComm_t comm, int stat, uint64_t* value)) {
  (void)comm, (void)stat, (void)value;
  return unmapped("ncclCommMemStats", "GPU memory statistics");
}

NCCL_API(Result, ncclCommWindowRegister,
         (braidComm_t comm, void* buff, size_t size, void** win, int winFlags)) {
  (void)comm, (void)buff, (void)size, (void)win, (void)winFlags;
  return unmapped("ncclCommWindowRegister", "symmetric memory windows");
}
NCCL_API(Result, ncclCommWindowDeregister, (braidComm_t comm, void* win)) {
  (void)comm, (void)win;
  return unmapped("ncclCommWindowDeregister", "symmetric memory windows");
}
NCCL_API(Result, ncclWinGetUserPtr, (braidComm_t comm, void* win, void** outUserPtr)) {
  (void)comm, (void)win, (void)outUserPtr;
  return unmapped("ncclWinGetUserPtr", "symmetric memory windows");
}

// ---- The device API's host side (nccl_device/core.h, 2.28+) ----------------------------
// braid has no device API: these answer ncclInvalidUsage, and exist so that programs linked
// against NCCL 2.28+ (PyTorch's libtorch_cuda.so among them) load. None reads its arguments,
// so the parameters the refusal does not need are left out (the C calling convention allows it).

NCCL_API(Result, ncclCommQueryProperties, (braidComm_t comm, void* props)) {
  (void)comm, (void)props;
  return unmapped("ncclCommQueryProperties", "the device API");
}
NCCL_API(Result, ncclDevCommCreate, (braidComm_t comm, const void* reqs, void* outDevComm)) {
  (void)comm, (void)reqs, (void)outDevComm;
  return unmapped("ncclDevCommCreate", "the device API");
}
NCCL_API(Result, ncclDevCommDestroy, (braidComm_t comm, const void* devComm)) {
  (void)comm, (void)devComm;
  return unmapped("ncclDevCommDestroy", "the device API");
}
NCCL_API(Result, ncclGetLsaMultimemDevicePointer, (void* window, size_t offset)) {
  (void)window, (void)offset;
  return unmapped("ncclGetLsaMultimemDevicePointer", "the device API's window pointers");
}
NCCL_API(Result, ncclGetMultimemDevicePointer, (void* window, size_t offset)) {
  (void)window, (void)offset;
  return unmapped("ncclGetMultimemDevicePointer", "the device API's window pointers");
}
NCCL_API(Result, ncclGetLsaDevicePointer, (void* window, size_t offset)) {
  (void)window, (void)offset;
  return unmapped("ncclGetLsaDevicePointer", "the device API's window pointers");
}
NCCL_API(Result, ncclGetPeerDevicePointer, (void* window, size_t offset)) {
  (void)window, (void)offset;
  return unmapped("ncclGetPeerDevicePointer", "the device API's window pointers");
}

// ---- Reduction operators ----------------------------------------------------------------

NCCL_API(Result, ncclRedOpCreatePreMulSum,
         (RedOp * op, void* scalar, DataType datatype, int residence, braidComm_t comm)) {
  return forward(braidRedOpCreatePreMulSum(reinterpret_cast<braidRedOp_t*>(op), scalar,
                                           static_cast<braidDataType_t>(datatype),
                                           static_cast<braidScalarResidence_t>(residence), comm));
}
NCCL_API(Result, ncclRedOpDestroy, (RedOp op, braidComm_t comm)) {
  return forward(braidRedOpDestroy(static_cast<braidRedOp_t>(op), comm));
}

// ---- Collectives and point-to-point -----------------------------------------------------

NCCL_API(Result, ncclReduce,
         (const void* sendbuff, void* recvbuff, size_t count, DataType datatype, RedOp op, int root,
          braidComm_t comm, Stream stream)) {
  return forward(braidReduce(sendbuff, recvbuff, count, static_cast<braidDataType_t>(datatype),
                             static_cast<braidRedOp_t>(op), root, comm, stream));
}

NCCL_API(Result, ncclBcast,
         (void* buff, size_t count, DataType datatype, int root, braidComm_t comm, Stream stream)) {
  return forward(
      braidBcast(buff, count, static_cast<braidDataType_t>(datatype), root, comm, stream));
}

NCCL_API(Result, ncclBroadcast,
         (const void* sendbuff, void* recvbuff, size_t count, DataType datatype, int root,
          braidComm_t comm, Stream stream)) {
  return forward(braidBroadcast(sendbuff, recvbuff, count, static_cast<braidDataType_t>(datatype),
                                root, comm, stream));
}

NCCL_API(Result, ncclAllReduce,
         (const void* sendbuff, void* recvbuff, size_t count, DataType datatype, RedOp op,
          braidComm_t comm, Stream stream)) {
  return forward(braidAllReduce(sendbuff, recvbuff, count, static_cast<braidDataType_t>(datatype),
                                static_cast<braidRedOp_t>(op), comm, stream));
}

NCCL_API(Result, ncclReduceScatter,
         (const void* sendbuff, void* recvbuff, size_t recvcount, DataType datatype, RedOp op,
          braidComm_t comm, Stream stream)) {
  return forward(braidReduceScatter(sendbuff, recvbuff, recvcount,
                                    static_cast<braidDataType_t>(datatype),
                                    static_cast<braidRedOp_t>(op), comm, stream));
}

NCCL_API(Result, ncclAllGather,
         (const void* sendbuff, void* recvbuff, size_t sendcount, DataType datatype,
          braidComm_t comm, Stream stream)) {
  return forward(braidAllGather(sendbuff, recvbuff, sendcount,
                                static_cast<braidDataType_t>(datatype), comm, stream));
}

NCCL_API(Result, ncclAlltoAll,
         (const void* sendbuff, void* recvbuff, size_t count, DataType datatype, braidComm_t comm,
          Stream stream)) {
  return forward(braidAllToAll(sendbuff, recvbuff, count, static_cast<braidDataType_t>(datatype),
                               comm, stream));
}

NCCL_API(Result, ncclGather,
         (const void* sendbuff, void* recvbuff, size_t count, DataType datatype, int root,
          braidComm_t comm, Stream stream)) {
  return forward(braidGather(sendbuff, recvbuff, count, static_cast<braidDataType_t>(datatype),
                             root, comm, stream));
}

NCCL_API(Result, ncclScatter,
         (const void* sendbuff, void* recvbuff, size_t count, DataType datatype, int root,
          braidComm_t comm, Stream stream)) {
  return forward(braidScatter(sendbuff, recvbuff, count, static_cast<braidDataType_t>(datatype),
                              root, comm, stream));
}

NCCL_API(Result, ncclSend,
         (const void* sendbuff, size_t count, DataType datatype, int peer, braidComm_t comm,
          Stream stream)) {
  return forward(
      braidSend(sendbuff, count, static_cast<braidDataType_t>(datatype), peer, comm, stream));
}

NCCL_API(Result, ncclRecv,
         (void* recvbuff, size_t count, DataType datatype, int peer, braidComm_t comm,
          Stream stream)) {
  return forward(
      braidRecv(recvbuff, count, static_cast<braidDataType_t>(datatype), peer, comm, stream));
}

NCCL_API(Result, ncclPutSignal,
         (const void* localbuff, size_t count, DataType datatype, int peer, void* peerWin,
          size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags, braidComm_t comm,
          Stream stream)) {
  (void)localbuff, (void)count, (void)datatype, (void)peer, (void)peerWin, (void)peerWinOffset;
  (void)sigIdx, (void)ctx, (void)flags, (void)comm, (void)stream;
  return unmapped("ncclPutSignal", "one-sided puts into windows");
}
NCCL_API(Result, ncclSignal,
         (int peer, int sigIdx, int ctx, unsigned int flags, braidComm_t comm, Stream stream)) {
  (void)peer, (void)sigIdx, (void)ctx, (void)flags, (void)comm, (void)stream;
  return unmapped("ncclSignal", "one-sided signals");
}
NCCL_API(Result, ncclWaitSignal, (int nDesc, void* signalDescs, braidComm_t comm, Stream stream)) {
  (void)nDesc, (void)signalDescs, (void)comm, (void)stream;
  return unmapped("ncclWaitSignal", "one-sided signals");
}

// ---- Groups -----------------------------------------------------------------------------

NCCL_API(Result, ncclGroupStart, ()) { return forward(braidGroupStart()); }
NCCL_API(Result, ncclGroupEnd, ()) { return forward(braidGroupEnd()); }

NCCL_API(Result, ncclGroupSimulateEnd, (SimInfo * simInfo)) {
  (void)simInfo;
  return unmapped("ncclGroupSimulateEnd", "simulating a group");
}

// ---- Parameter registry (2.30) ----------------------------------------------------------

NCCL_API(Result, ncclParamBind, (void** out, const char* key)) {
  (void)out, (void)key;
  return unmapped("ncclParamBind", "NCCL's parameter registry (braid reads BRAID_* variables)");
}
#define NCCL_PARAM_GET(name, type)                       \
  NCCL_API(Result, name, (void* h, type* out)) {         \
    (void)h, (void)out;                                  \
    return unmapped(#name, "NCCL's parameter registry"); \
  }
NCCL_PARAM_GET(ncclParamGetI8, int8_t)
NCCL_PARAM_GET(ncclParamGetI16, int16_t)
NCCL_PARAM_GET(ncclParamGetI32, int32_t)
NCCL_PARAM_GET(ncclParamGetI64, int64_t)
NCCL_PARAM_GET(ncclParamGetU8, uint8_t)
NCCL_PARAM_GET(ncclParamGetU16, uint16_t)
NCCL_PARAM_GET(ncclParamGetU32, uint32_t)
NCCL_PARAM_GET(ncclParamGetU64, uint64_t)
NCCL_PARAM_GET(ncclParamGetStr, const char*)
NCCL_API(Result, ncclParamGet, (void* h, void* out, int maxLen, int* len)) {
  (void)h, (void)out, (void)maxLen, (void)len;
  return unmapped("ncclParamGet", "NCCL's parameter registry");
}
NCCL_API(Result, ncclParamGetParameter, (const char* key, const char** value, int* valueLen)) {
  (void)key, (void)value, (void)valueLen;
  return unmapped("ncclParamGetParameter", "NCCL's parameter registry");
}
NCCL_API(Result, ncclParamGetAllParameterKeys, (const char*** table, int* tableLen)) {
  (void)table, (void)tableLen;
  return unmapped("ncclParamGetAllParameterKeys", "NCCL's parameter registry");
}
NCCL_API(void, ncclParamDumpAll, ()) {}  // no registry: nothing to print
