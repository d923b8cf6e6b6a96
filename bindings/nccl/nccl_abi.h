// The binary interface of NCCL's host API, as far as the drop-in needs it: type sizes,
// enum values and struct layouts that an application compiled against NCCL's nccl.h passes
// in. Written from NCCL's documented ABI (2.28-2.30 headers), not from its header text;
// tests/integration/nccl/ compiles programs against NCCL's own headers to prove they match.
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid::nccl {

// ncclResult_t, ncclDataType_t and ncclRedOp_t are C enums (int-sized) with the same
// values as braid's; handles and streams are pointers.
using Result = int;
using DataType = int;
using RedOp = int;
using Stream = void*;

constexpr Result kSuccess = 0;
constexpr Result kInvalidArgument = 4;
constexpr Result kInvalidUsage = 5;

constexpr DataType kFloat8e4m3 = 10;
constexpr DataType kFloat8e5m2 = 11;

// ncclConfig_t: versioned by its first three fields; later releases append fields, so the
// drop-in reads only fields every release since 2.14 has, at fixed offsets, after checking
// size and magic.
constexpr unsigned kConfigMagic = 0xcafebeef;  // NCCL_API_MAGIC
constexpr int kConfigUndefInt = INT32_MIN;     // NCCL_CONFIG_UNDEF_INT
struct ConfigPrefix {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char* netName;
  int splitShare;
};
static_assert(offsetof(ConfigPrefix, blocking) == 16, "ncclConfig_t.blocking");
static_assert(offsetof(ConfigPrefix, netName) == 32, "ncclConfig_t.netName");

// ncclCommShrink's flags (2.27+).
constexpr int kShrinkDefault = 0x00;  // NCCL_SHRINK_DEFAULT
constexpr int kShrinkAbort = 0x01;    // NCCL_SHRINK_ABORT

// ncclSimInfo_t (2.22+).
constexpr unsigned kSimInfoMagic = 0x74685283;
struct SimInfo {
  size_t size;
  unsigned int magic;
  unsigned int version;
  float estimatedTime;
};

// ncclCollConfig_t (2.32): per-call options of the nccl*Config collectives; versioned like
// ncclConfig_t (NCCL_API_MAGIC), append-only. The fields the drop-in reads:
struct CollConfigPrefix {
  size_t size;
  unsigned int magic;
  unsigned int version;
  void* ext;  // vendor extensions (NCCL ignores them all)
  int minCTAs, maxCTAs, nvlsCTAs, cgaClusterSize;
  const char* algSelection;
  int forceAlgSelection;
  int ctaPolicy;
  uint64_t userProfilerTag;
  void* launchCompletionEvent;  // a cudaEvent_t
};
static_assert(offsetof(CollConfigPrefix, algSelection) == 40, "ncclCollConfig_t.algSelection");
static_assert(offsetof(CollConfigPrefix, launchCompletionEvent) == 64,
              "ncclCollConfig_t.launchCompletionEvent");

// ---- The device API's host side (nccl_device/core.h and host.h, 2.28+) ----

// ncclTeam_t: a set of ranks that are `stride` apart in the world, of which the caller is
// number `rank`. Passed and returned by value (12 bytes: two registers on x86-64).
struct Team {
  int nRanks, rank, stride;
};

// ncclDevResourceRequirements_t: what one device-side object needs from ncclDevCommCreate.
using DevResourceHandle = uint32_t;  // ncclDevResourceHandle_t
using GinSignal = uint32_t;          // ncclGinSignal_t
using GinCounter = uint32_t;         // ncclGinCounter_t
struct DevResourceRequirements {
  DevResourceRequirements* next;
  size_t bufferSize, bufferAlign;
  DevResourceHandle* outBufferHandle;  // set by ncclDevCommCreate
  int ginSignalCount;
  int ginCounterCount;
  GinSignal* outGinSignalStart;
  GinCounter* outGinCounterStart;
};
static_assert(offsetof(DevResourceRequirements, outBufferHandle) == 24, "outBufferHandle");
static_assert(offsetof(DevResourceRequirements, outGinCounterStart) == 48, "outGinCounterStart");

// The handles the *CreateRequirement functions fill (impl/*__types.h).
struct LsaBarrierHandle {
  DevResourceHandle bufHandle;
  int nBarriers;
};
struct GinBarrierHandle {
  GinSignal signal0;
  DevResourceHandle unused;
};
struct LLA2AHandle {
  DevResourceHandle bufHandle;
  uint32_t nSlots;
};

// NCCL_VERSION(X, Y, Z) for releases since 2.9.
constexpr int versionCode(int major, int minor, int patch) {
  return major * 10000 + minor * 100 + patch;
}

}  // namespace braid::nccl
