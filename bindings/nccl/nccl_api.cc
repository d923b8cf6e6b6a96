// libnccl.so.2 built from braid: NCCL's host API, each call forwarded to braid's C API.
//
// braid's C API has NCCL's argument order and enum values, so most calls forward one to
// one (ncclComm_t is a braidComm_t, ncclUniqueId a braidUniqueId of the same 128 bytes).
// Calls braid has no counterpart for (windows, signals, the parameter registry, suspend)
// return ncclInvalidUsage with a sentence for ncclGetLastError, so that callers fall
// back. Every function is defined as pnccl<Name> (NCCL's profiling interface) with
// nccl<Name> a weak alias of it, as in NCCL; libnccl.map exports those and nothing else.
#include "nccl_api.h"

#include <strings.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "braid.h"
#include "nccl_abi.h"

namespace braid::nccl {
namespace {

// The NCCL release whose host API the drop-in implements (bindings/nccl/CMakeLists.txt sets
// it, and names the library file after it). Features braid has no counterpart for (windows,
// the device API) answer ncclInvalidUsage with a sentence, so callers gated on the version
// fall back on the error, as they must on an NCCL built without them.
constexpr int kReportedVersion = versionCode(BRAID_NCCL_MAJOR, BRAID_NCCL_MINOR, BRAID_NCCL_PATCH);

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

}  // namespace braid::nccl

using namespace braid::nccl;

// ncclDataType_t values pass through unchanged, fp8 included.
static_assert(kFloat8e4m3 == braidFloat8e4m3 && kFloat8e5m2 == braidFloat8e5m2);

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

// NULL config: the new communicator inherits the parent's (blocking mode), as in NCCL.
NCCL_API(Result, ncclCommSplit,
         (braidComm_t comm, int color, int key, braidComm_t* newcomm, void* config)) {
  braidConfig_t braid;
  braidConfig_t* mapped = nullptr;
  if (Result r = checkConfig(config, "ncclCommSplit", &braid, &mapped); r != kSuccess) return r;
  return forward(braidCommSplitConfig(comm, color, key, newcomm, mapped));
}

// NCCL_SHRINK_DEFAULT and NCCL_SHRINK_ABORT have braid's values; braid checks them.
static_assert(kShrinkDefault == BRAID_SHRINK_DEFAULT && kShrinkAbort == BRAID_SHRINK_ABORT);
NCCL_API(Result, ncclCommShrink,
         (braidComm_t comm, int* excludeRanks, int excludeCount, braidComm_t* newcomm, void* config,
          int shrinkFlags)) {
  braidConfig_t braid;
  braidConfig_t* mapped = nullptr;
  if (Result r = checkConfig(config, "ncclCommShrink", &braid, &mapped); r != kSuccess) return r;
  return forward(
      braidCommShrinkConfig(comm, excludeRanks, excludeCount, newcomm, mapped, shrinkFlags));
}

NCCL_API(Result, ncclCommGrow,
         (braidComm_t comm, int nRanks, const braidUniqueId* uniqueId, int rank,
          braidComm_t* newcomm, void* config)) {
  braidConfig_t braid;
  braidConfig_t* mapped = nullptr;
  if (Result r = checkConfig(config, "ncclCommGrow", &braid, &mapped); r != kSuccess) return r;
  return forward(braidCommGrow(comm, nRanks, uniqueId, rank, newcomm, mapped));
}

NCCL_API(Result, ncclCommGetUniqueId, (braidComm_t comm, braidUniqueId* uniqueId)) {
  return forward(braidCommGetUniqueId(comm, uniqueId));
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

// NCCL's struct (its own magic) carried over to braid's; the estimate comes back in the
// same unit, microseconds.
NCCL_API(Result, ncclGroupSimulateEnd, (SimInfo * simInfo)) {
  if (simInfo == nullptr) {
    return refuse(kInvalidArgument, "ncclGroupSimulateEnd: simInfo is NULL");
  }
  if (simInfo->magic != kSimInfoMagic ||
      simInfo->size < offsetof(SimInfo, estimatedTime) + sizeof(float)) {
    return refuse(kInvalidArgument,
                  "ncclGroupSimulateEnd: simInfo was not set up with NCCL_SIM_INFO_INITIALIZER "
                  "(size " +
                      std::to_string(simInfo->size) + ", magic " + std::to_string(simInfo->magic) +
                      ")");
  }
  braidSimInfo_t info = BRAID_SIM_INFO_INITIALIZER;
  const Result result = forward(braidGroupSimulateEnd(&info));
  if (result == kSuccess) simInfo->estimatedTime = info.estimatedTime;
  return result;
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

// ---- Per-call configuration (2.32) -------------------------------------------------------
// nccl<Collective>Config is the plain call with a ncclCollConfig_t. NULL is the plain call.
// The resource knobs (CTA counts and policy, cluster size), the profiler tag and vendor
// extensions change nothing on braid and are accepted; a forced algorithm selection and a
// launch-completion event are not available, and say so.

namespace {

Result checkCollConfig(const void* config, const char* name) {
  if (config == nullptr) return kSuccess;
  const auto* c = static_cast<const CollConfigPrefix*>(config);
  if (c->magic != kConfigMagic || c->size < offsetof(CollConfigPrefix, algSelection)) {
    return refuse(kInvalidArgument, std::string(name) +
                                        ": config was not set up with "
                                        "NCCL_COLLCONFIG_INITIALIZER (size " +
                                        std::to_string(c->size) + ", magic " +
                                        std::to_string(c->magic) + ")");
  }
  const auto has = [c](size_t end) { return c->size >= end; };
  if (has(offsetof(CollConfigPrefix, ctaPolicy)) && c->algSelection != nullptr &&
      c->algSelection[0] != '\0' && c->forceAlgSelection != 0) {
    return refuse(kInvalidUsage, std::string(name) + ": config->algSelection \"" + c->algSelection +
                                     "\" cannot be forced per call in braid's libnccl.so.2; "
                                     "set NCCL_ALGO (or BRAID_ALGO) instead");
  }
  if (has(sizeof(CollConfigPrefix)) && c->launchCompletionEvent != nullptr) {
    return refuse(kInvalidUsage, std::string(name) +
                                     ": config->launchCompletionEvent is not available in "
                                     "braid's libnccl.so.2");
  }
  return kSuccess;
}

}  // namespace

#define NCCL_CHECK_COLL_CONFIG(name) \
  if (Result checked = checkCollConfig(config, name); checked != kSuccess) return checked

NCCL_API(Result, ncclAllReduceConfig,
         (const void* sendbuff, void* recvbuff, size_t count, DataType datatype, RedOp op,
          braidComm_t comm, Stream stream, const void* config)) {
  NCCL_CHECK_COLL_CONFIG("ncclAllReduceConfig");
  return ncclAllReduce(sendbuff, recvbuff, count, datatype, op, comm, stream);
}

NCCL_API(Result, ncclBroadcastConfig,
         (const void* sendbuff, void* recvbuff, size_t count, DataType datatype, int root,
          braidComm_t comm, Stream stream, const void* config)) {
  NCCL_CHECK_COLL_CONFIG("ncclBroadcastConfig");
  return ncclBroadcast(sendbuff, recvbuff, count, datatype, root, comm, stream);
}

NCCL_API(Result, ncclReduceConfig,
         (const void* sendbuff, void* recvbuff, size_t count, DataType datatype, RedOp op, int root,
          braidComm_t comm, Stream stream, const void* config)) {
  NCCL_CHECK_COLL_CONFIG("ncclReduceConfig");
  return ncclReduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

NCCL_API(Result, ncclReduceScatterConfig,
         (const void* sendbuff, void* recvbuff, size_t recvcount, DataType datatype, RedOp op,
          braidComm_t comm, Stream stream, const void* config)) {
  NCCL_CHECK_COLL_CONFIG("ncclReduceScatterConfig");
  return ncclReduceScatter(sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
}

NCCL_API(Result, ncclAllGatherConfig,
         (const void* sendbuff, void* recvbuff, size_t sendcount, DataType datatype,
          braidComm_t comm, Stream stream, const void* config)) {
  NCCL_CHECK_COLL_CONFIG("ncclAllGatherConfig");
  return ncclAllGather(sendbuff, recvbuff, sendcount, datatype, comm, stream);
}

NCCL_API(Result, ncclAlltoAllConfig,
         (const void* sendbuff, void* recvbuff, size_t count, DataType datatype, braidComm_t comm,
          Stream stream, const void* config)) {
  NCCL_CHECK_COLL_CONFIG("ncclAlltoAllConfig");
  return ncclAlltoAll(sendbuff, recvbuff, count, datatype, comm, stream);
}

NCCL_API(Result, ncclGatherConfig,
         (const void* sendbuff, void* recvbuff, size_t count, DataType datatype, int root,
          braidComm_t comm, Stream stream, const void* config)) {
  NCCL_CHECK_COLL_CONFIG("ncclGatherConfig");
  return ncclGather(sendbuff, recvbuff, count, datatype, root, comm, stream);
}

NCCL_API(Result, ncclScatterConfig,
         (const void* sendbuff, void* recvbuff, size_t count, DataType datatype, int root,
          braidComm_t comm, Stream stream, const void* config)) {
  NCCL_CHECK_COLL_CONFIG("ncclScatterConfig");
  return ncclScatter(sendbuff, recvbuff, count, datatype, root, comm, stream);
}

// Encryption of NCCL's TCP sockets (2.32). Plaintext (NCCL_ENCRYPTION_MODE_NONE) is braid's
// default and is accepted; a pre-shared key is not how braid's TLS is set up
// (BRAID_SOCKET_TLS=1 derives its key from the unique id).
NCCL_API(Result, ncclSetEncryption, (const void* config)) {
  struct EncryptionPrefix {
    size_t size;
    unsigned int magic;
    unsigned int version;
    int mode;
  };
  const auto* c = static_cast<const EncryptionPrefix*>(config);
  if (c == nullptr || c->magic != kConfigMagic || c->size < sizeof(EncryptionPrefix)) {
    return refuse(kInvalidArgument,
                  "ncclSetEncryption: config is NULL or was not set up with "
                  "NCCL_ENCRYPTION_CONFIG_INITIALIZER");
  }
  if (c->mode == 0) return forward(braidSuccess);
  return unmapped("ncclSetEncryption",
                  "encryption with a pre-shared key (set BRAID_SOCKET_TLS=1 on every rank)");
}
