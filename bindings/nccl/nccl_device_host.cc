// The host side of NCCL's device API (nccl_device/host.h, 2.28+): teams, the resource
// requirements of device-side objects, and the device communicator itself.
//
// Teams are arithmetic over the communicator's rank layout, and braid answers them exactly
// as NCCL defines them. A team is {nRanks, rank, stride}: nRanks ranks `stride` apart in the
// world, the caller being number `rank`. World is every rank. LSA ("load/store accessible")
// is the block of consecutive ranks that share memory: on braid, ranks on one host. Its size
// is the same on every rank, the greatest common divisor of the lengths of the runs of
// consecutive ranks on one host (and of NCCL_LSA_TEAM_SIZE when set), so an uneven or
// interleaved layout gives LSA teams of one rank. Rail is the ranks with the caller's place
// in their LSA team, one per LSA team (stride lsaSize).
//
// The *CreateRequirement functions compute what a device-side barrier or all-to-all needs
// (buffer bytes and alignment, signal counts), the same numbers as NCCL. Only
// ncclDevCommCreate consumes them, and braid has no device communicator: it answers
// ncclInvalidUsage, as do the queries that need symmetric memory windows or CFT teams,
// which braid does not have. Team functions cannot return an error code: on bad input
// they return the empty team {0, 0, 0} (or rank -1) and ncclGetLastError says why.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

#include "braid.h"
#include "nccl_abi.h"
#include "nccl_api.h"

namespace braid::nccl {
namespace {

constexpr Team kNoTeam = {0, 0, 0};

struct Layout {
  int rank = 0, nranks = 0;
  int lsaSize = 1;
};

// NCCL_LSA_TEAM_SIZE: caps the LSA team (the gcd takes it in); 0 or unset: no cap.
int lsaTeamSizeCap() {
  const char* value = std::getenv("NCCL_LSA_TEAM_SIZE");
  if (value == nullptr) return 0;
  char* end = nullptr;
  const long n = std::strtol(value, &end, 10);
  return end != value && *end == '\0' && n > 0 && n <= INT32_MAX ? static_cast<int>(n) : 0;
}

// The caller's rank, the size and the LSA size of `comm`; a refusal naming `api` for a
// handle that is not a live communicator.
Result layoutOf(braidComm_t comm, const char* api, Layout* out) {
  if (braidCommCount(comm, &out->nranks) != braidSuccess ||
      braidCommUserRank(comm, &out->rank) != braidSuccess) {
    return refuse(kInvalidArgument, std::string(api) + ": " + braidGetLastError(nullptr));
  }
  int lsa = lsaTeamSizeCap();
  int run = 0, previous = -1;
  for (int r = 0; r < out->nranks; ++r) {
    int host = 0;
    if (braidCommRankHost(comm, r, &host) != braidSuccess) {
      return refuse(kInvalidArgument, std::string(api) + ": " + braidGetLastError(comm));
    }
    if (r > 0 && host != previous) {
      lsa = std::gcd(lsa, run);
      run = 0;
    }
    previous = host;
    ++run;
  }
  out->lsaSize = std::max(1, std::gcd(lsa, run));
  return kSuccess;
}

std::string describe(Team team) {
  return "{nRanks " + std::to_string(team.nRanks) + ", rank " + std::to_string(team.rank) +
         ", stride " + std::to_string(team.stride) + "}";
}

// Rank `rank` of `team` as an offset from the caller in the world, or a refusal.
Result worldOffset(Team team, int rank, const char* api, int64_t* offset) {
  if (team.nRanks <= 0 || team.rank < 0 || team.rank >= team.nRanks || team.stride == 0) {
    return refuse(kInvalidArgument, std::string(api) + ": team " + describe(team) +
                                        " is not a team of this communicator");
  }
  if (rank < 0 || rank >= team.nRanks) {
    return refuse(kInvalidArgument, std::string(api) + ": rank " + std::to_string(rank) +
                                        " is outside team " + describe(team));
  }
  *offset = (int64_t{rank} - team.rank) * team.stride;
  return kSuccess;
}

Result checkOut(const void* handle, const void* req, const char* api) {
  if (handle == nullptr) return refuse(kInvalidArgument, std::string(api) + ": outHandle is NULL");
  if (req == nullptr) return refuse(kInvalidArgument, std::string(api) + ": outReq is NULL");
  return kSuccess;
}

Result checkCount(int64_t value, const char* api, const char* name) {
  if (value >= 0) return kSuccess;
  return refuse(kInvalidArgument,
                std::string(api) + ": " + name + " " + std::to_string(value) + " is negative");
}

}  // namespace
}  // namespace braid::nccl

using namespace braid::nccl;

// ---- Teams ------------------------------------------------------------------------------

NCCL_API(Team, ncclTeamWorld, (braidComm_t comm)) {
  Layout layout;
  if (layoutOf(comm, "ncclTeamWorld", &layout) != kSuccess) return kNoTeam;
  forward(braidSuccess);
  return Team{layout.nranks, layout.rank, 1};
}

NCCL_API(Team, ncclTeamLsa, (braidComm_t comm)) {
  Layout layout;
  if (layoutOf(comm, "ncclTeamLsa", &layout) != kSuccess) return kNoTeam;
  forward(braidSuccess);
  return Team{layout.lsaSize, layout.rank % layout.lsaSize, 1};
}

NCCL_API(Team, ncclTeamRail, (braidComm_t comm)) {
  Layout layout;
  if (layoutOf(comm, "ncclTeamRail", &layout) != kSuccess) return kNoTeam;
  forward(braidSuccess);
  return Team{layout.nranks / layout.lsaSize, layout.rank / layout.lsaSize, layout.lsaSize};
}

NCCL_API(Team, ncclTeamCft, (braidComm_t comm, int mode)) {
  (void)comm, (void)mode;
  unmapped("ncclTeamCft", "CFT teams (NCCL's copy-fabric device transport)");
  return kNoTeam;
}

NCCL_API(Team, ncclTeamCftMultimem, (braidComm_t comm)) {
  (void)comm;
  unmapped("ncclTeamCftMultimem", "CFT teams (NCCL's copy-fabric device transport)");
  return kNoTeam;
}

NCCL_API(int, ncclTeamRankToWorld, (braidComm_t comm, Team team, int rank)) {
  const char* api = "ncclTeamRankToWorld";
  Layout layout;
  int64_t offset = 0;
  if (layoutOf(comm, api, &layout) != kSuccess || worldOffset(team, rank, api, &offset) != kSuccess)
    return -1;
  const int64_t world = layout.rank + offset;
  if (world < 0 || world >= layout.nranks) {
    refuse(kInvalidArgument, std::string(api) + ": team " + describe(team) +
                                 " does not fit the communicator (rank " + std::to_string(rank) +
                                 " would be world rank " + std::to_string(world) + " of " +
                                 std::to_string(layout.nranks) + ")");
    return -1;
  }
  forward(braidSuccess);
  return static_cast<int>(world);
}

NCCL_API(int, ncclTeamRankToLsa, (braidComm_t comm, Team team, int rank)) {
  const char* api = "ncclTeamRankToLsa";
  Layout layout;
  int64_t offset = 0;
  if (layoutOf(comm, api, &layout) != kSuccess || worldOffset(team, rank, api, &offset) != kSuccess)
    return -1;
  const int64_t lsa = layout.rank % layout.lsaSize + offset;
  if (lsa < 0 || lsa >= layout.lsaSize) {
    refuse(kInvalidArgument, std::string(api) + ": rank " + std::to_string(rank) + " of team " +
                                 describe(team) + " is not in this rank's LSA team (of " +
                                 std::to_string(layout.lsaSize) + " ranks)");
    return -1;
  }
  forward(braidSuccess);
  return static_cast<int>(lsa);
}

// ---- Resource requirements ----------------------------------------------------------------
// NCCL's sizes: an LSA barrier is three words per barrier plus one per barrier and team rank;
// a GIN barrier one signal per barrier and team rank; an LL all-to-all block one 16-byte
// header and two 16-byte lines per slot, a slot holding 8 bytes of an element.

NCCL_API(Result, ncclLsaBarrierCreateRequirement,
         (Team team, int nBarriers, LsaBarrierHandle* outHandle, DevResourceRequirements* outReq)) {
  const char* api = "ncclLsaBarrierCreateRequirement";
  if (Result r = checkOut(outHandle, outReq, api); r != kSuccess) return r;
  if (Result r = checkCount(nBarriers, api, "nBarriers"); r != kSuccess) return r;
  if (Result r = checkCount(team.nRanks, api, "team.nRanks"); r != kSuccess) return r;
  std::memset(outReq, 0, sizeof(*outReq));
  outHandle->nBarriers = nBarriers;
  outReq->bufferSize = (3 * size_t(nBarriers) + size_t(nBarriers) * team.nRanks) * 4;
  outReq->bufferAlign = alignof(uint32_t);
  outReq->outBufferHandle = &outHandle->bufHandle;
  return forward(braidSuccess);
}

NCCL_API(Result, ncclGinBarrierCreateRequirement,
         (braidComm_t comm, Team team, int nBarriers, GinBarrierHandle* outHandle,
          DevResourceRequirements* outReq)) {
  const char* api = "ncclGinBarrierCreateRequirement";
  int nranks = 0;
  if (braidCommCount(comm, &nranks) != braidSuccess) {
    return refuse(kInvalidArgument, std::string(api) + ": " + braidGetLastError(nullptr));
  }
  if (Result r = checkOut(outHandle, outReq, api); r != kSuccess) return r;
  if (Result r = checkCount(nBarriers, api, "nBarriers"); r != kSuccess) return r;
  if (Result r = checkCount(team.nRanks, api, "team.nRanks"); r != kSuccess) return r;
  const int64_t signals = int64_t{nBarriers} * team.nRanks;
  if (signals > INT32_MAX) {
    return refuse(kInvalidArgument, std::string(api) + ": " + std::to_string(nBarriers) +
                                        " barriers of " + std::to_string(team.nRanks) +
                                        " ranks need more signals than an int counts");
  }
  std::memset(outReq, 0, sizeof(*outReq));
  outReq->ginSignalCount = static_cast<int>(signals);
  outReq->outGinSignalStart = &outHandle->signal0;
  return forward(braidSuccess);
}

NCCL_API(Result, ncclCftBarrierCreateRequirement,
         (Team team, int nBarriers, void* outHandle, DevResourceRequirements* outReq)) {
  (void)team, (void)nBarriers, (void)outHandle, (void)outReq;
  return unmapped("ncclCftBarrierCreateRequirement",
                  "CFT barriers (NCCL's copy-fabric device transport)");
}

NCCL_API(int, ncclLLA2ACalcSlots, (int maxElts, int maxEltSize)) {
  const char* api = "ncclLLA2ACalcSlots";
  if (checkCount(maxElts, api, "maxElts") != kSuccess ||
      checkCount(maxEltSize, api, "maxEltSize") != kSuccess) {
    return -1;
  }
  const int64_t slots = int64_t{maxElts} * ((int64_t{maxEltSize} + 7) / 8);
  if (slots > INT32_MAX) {
    refuse(kInvalidArgument, std::string(api) + ": " + std::to_string(maxElts) + " elements of " +
                                 std::to_string(maxEltSize) +
                                 " bytes need more slots than an int counts");
    return -1;
  }
  forward(braidSuccess);
  return static_cast<int>(slots);
}

NCCL_API(Result, ncclLLA2ACreateRequirement,
         (int nBlocks, int nSlots, LLA2AHandle* outHandle, DevResourceRequirements* outReq)) {
  const char* api = "ncclLLA2ACreateRequirement";
  if (Result r = checkOut(outHandle, outReq, api); r != kSuccess) return r;
  if (Result r = checkCount(nBlocks, api, "nBlocks"); r != kSuccess) return r;
  if (Result r = checkCount(nSlots, api, "nSlots"); r != kSuccess) return r;
  std::memset(outReq, 0, sizeof(*outReq));
  outHandle->nSlots = static_cast<uint32_t>(nSlots);
  outReq->bufferSize = size_t(nBlocks) * (1 + 2 * size_t(nSlots)) * 16;
  outReq->bufferAlign = 16;
  outReq->outBufferHandle = &outHandle->bufHandle;
  return forward(braidSuccess);
}

// GIN scratch buffers are sized by NCCL's device-side state, which braid has no counterpart of.
NCCL_API(Result, ncclGinOutboxCreateRequirement,
         (int nBlocks, int sizeLog2, void* outHandle, DevResourceRequirements* outReq)) {
  (void)nBlocks, (void)sizeLog2, (void)outHandle, (void)outReq;
  return unmapped("ncclGinOutboxCreateRequirement",
                  "GIN scratch buffers (GPU-initiated networking)");
}

NCCL_API(Result, ncclGinInboxA2ACreateRequirement,
         (Team peers, int nBlocks, int sizeLog2, void* outHandle,
          DevResourceRequirements* outReq)) {
  (void)peers, (void)nBlocks, (void)sizeLog2, (void)outHandle, (void)outReq;
  return unmapped("ncclGinInboxA2ACreateRequirement",
                  "GIN scratch buffers (GPU-initiated networking)");
}

// ---- The device communicator and window queries -------------------------------------------
// braid has no device communicator and no symmetric memory windows: these answer
// ncclInvalidUsage. They exist so that programs linked against NCCL 2.28+ (PyTorch's
// libtorch_cuda.so among them) load, and fall back on the error.

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

#define NCCL_WINDOW_QUERY(name, params, ...)                             \
  NCCL_API(Result, name, params) {                                       \
    (void)window, (void)offset;                                          \
    __VA_ARGS__;                                                         \
    return unmapped(#name, "symmetric memory windows (the device API)"); \
  }
NCCL_WINDOW_QUERY(ncclGetLsaMultimemDevicePointer, (void* window, size_t offset, void** outPtr),
                  (void)outPtr)
NCCL_WINDOW_QUERY(ncclGetMultimemDevicePointer,
                  (void* window, size_t offset, const void* multimem, void** outPtr),
                  (void)multimem, (void)outPtr)
NCCL_WINDOW_QUERY(ncclGetLsaDevicePointer,
                  (void* window, size_t offset, int lsaRank, void** outPtr), (void)lsaRank,
                  (void)outPtr)
NCCL_WINDOW_QUERY(ncclGetPeerDevicePointer, (void* window, size_t offset, int peer, void** outPtr),
                  (void)peer, (void)outPtr)
NCCL_WINDOW_QUERY(ncclGetMultimemDeviceLeInfo,
                  (void* window, size_t offset, uint32_t* leId, size_t* leOffset), (void)leId,
                  (void)leOffset)
NCCL_WINDOW_QUERY(ncclGetCftDeviceLeInfo,
                  (void* window, size_t offset, int peerCft, Team cftTeam, uint32_t* leId,
                   size_t* leOffset),
                  (void)peerCft, (void)cftTeam, (void)leId, (void)leOffset)
NCCL_WINDOW_QUERY(ncclGetPeerDeviceLeInfo,
                  (void* window, size_t offset, int peerWorld, uint32_t* leId, size_t* leOffset),
                  (void)peerWorld, (void)leId, (void)leOffset)
