// The host side of NCCL's device API on braid's libnccl.so.2, seen from a program compiled
// (as C++, without nvcc) against NCCL's own nccl.h and nccl_device.h.
//
// Teams: ncclCommInitAll makes host ranks in this process and BRAID_HOST_ID places them on
// fake hosts; each layout's world, LSA and rail teams are checked against the definition
// computed here (LSA size: the gcd of the lengths of the runs of consecutive ranks on one
// host, capped by NCCL_LSA_TEAM_SIZE) and against NCCL's own inline team arithmetic from its
// header (ncclTeamInnerFactor, ncclTeamOuterFactor, ncclTeamRankToTeam). Resource
// requirements are checked against NCCL's sizes; bad input against NCCL's result codes and a
// sentence; features braid lacks (CFT teams, windows, the device communicator) against
// ncclInvalidUsage. Exit 0 on success.
#include <nccl.h>
#include <nccl_device.h>
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

extern "C" void ncclResetDebugInitInternal();  // exported by NCCL, declared by no header

namespace {

int failures = 0;

#define CHECK(cond, ...)                           \
  do {                                             \
    if (!(cond)) {                                 \
      std::fprintf(stderr, "line %d: ", __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);           \
      std::fputc('\n', stderr);                    \
      ++failures;                                  \
    }                                              \
  } while (0)

bool sameTeam(ncclTeam_t a, ncclTeam_t b) {
  return a.nRanks == b.nRanks && a.rank == b.rank && a.stride == b.stride;
}

bool lastErrorSays(const char* what) {
  return std::strstr(ncclGetLastError(nullptr), what) != nullptr;
}

// The reference: NCCL's definition of the LSA size for hosts[], capped by `cap` (0: none).
int referenceLsaSize(const std::vector<char>& hosts, int cap) {
  int lsa = cap, run = 0;
  for (size_t r = 0; r < hosts.size(); ++r) {
    if (r > 0 && hosts[r] != hosts[r - 1]) {
      lsa = std::gcd(lsa, run);
      run = 0;
    }
    ++run;
  }
  return std::gcd(lsa, run);
}

void checkLayout(const char* hostList, int cap) {
  std::vector<char> hosts;
  for (const char* p = hostList; *p; ++p) {
    if (*p != ',') hosts.push_back(*p);
  }
  const int n = static_cast<int>(hosts.size());
  setenv("BRAID_HOST_ID", hostList, 1);
  if (cap > 0) {
    setenv("NCCL_LSA_TEAM_SIZE", std::to_string(cap).c_str(), 1);
  } else {
    unsetenv("NCCL_LSA_TEAM_SIZE");
  }
  std::vector<ncclComm_t> comms(n);
  ncclResult_t r = ncclCommInitAll(comms.data(), n, nullptr);
  CHECK(r == ncclSuccess, "%s: ncclCommInitAll: %s", hostList, ncclGetLastError(nullptr));
  if (r != ncclSuccess) return;
  const int lsaSize = referenceLsaSize(hosts, cap);
  for (int rank = 0; rank < n; ++rank) {
    ncclComm_t comm = comms[rank];
    const ncclTeam_t world = ncclTeamWorld(comm), lsa = ncclTeamLsa(comm),
                     rail = ncclTeamRail(comm);
    CHECK(sameTeam(world, ncclTeam_t{n, rank, 1}), "%s rank %d: world {%d,%d,%d}", hostList, rank,
          world.nRanks, world.rank, world.stride);
    CHECK(sameTeam(lsa, ncclTeam_t{lsaSize, rank % lsaSize, 1}),
          "%s (cap %d) rank %d: lsa {%d,%d,%d}, want size %d", hostList, cap, rank, lsa.nRanks,
          lsa.rank, lsa.stride, lsaSize);
    CHECK(sameTeam(rail, ncclTeam_t{n / lsaSize, rank / lsaSize, lsaSize}),
          "%s rank %d: rail {%d,%d,%d}", hostList, rank, rail.nRanks, rail.rank, rail.stride);
    // NCCL's header: LSA and rail are the inner and outer factors of the world.
    CHECK(sameTeam(lsa, ncclTeamInnerFactor(world, lsaSize)), "%s rank %d: lsa != inner factor",
          hostList, rank);
    CHECK(sameTeam(rail, ncclTeamOuterFactor(world, lsaSize)), "%s rank %d: rail != outer factor",
          hostList, rank);
    for (const ncclTeam_t team : {world, lsa, rail}) {
      for (int i = 0; i < team.nRanks; ++i) {
        const int w = ncclTeamRankToWorld(comm, team, i);
        CHECK(w == ncclTeamRankToTeam(world, team, i), "%s rank %d: team {%d,%d,%d} rank %d -> %d",
              hostList, rank, team.nRanks, team.rank, team.stride, i, w);
        // In the caller's LSA team exactly when on its host block: then its LSA index.
        const bool inLsa = w / lsaSize == rank / lsaSize;
        const int l = ncclTeamRankToLsa(comm, team, i);
        CHECK(l == (inLsa ? w % lsaSize : -1), "%s rank %d: RankToLsa(team {%d,%d,%d}, %d) = %d",
              hostList, rank, team.nRanks, team.rank, team.stride, i, l);
        if (!inLsa)
          CHECK(lastErrorSays("not in this rank's LSA team"), "%s", ncclGetLastError(nullptr));
      }
    }
    // Bad input: a rank outside the team, a team that is not this communicator's.
    CHECK(ncclTeamRankToWorld(comm, world, n) == -1 && lastErrorSays("outside team"),
          "rank n accepted: %s", ncclGetLastError(nullptr));
    CHECK(ncclTeamRankToWorld(comm, ncclTeam_t{n + 1, rank, 1}, n) == -1 &&
              lastErrorSays("does not fit"),
          "oversized team accepted: %s", ncclGetLastError(nullptr));
    CHECK(ncclTeamRankToWorld(comm, ncclTeam_t{0, 0, 1}, 0) == -1 && lastErrorSays("not a team"),
          "empty team accepted: %s", ncclGetLastError(nullptr));
  }
  for (ncclComm_t comm : comms) ncclCommDestroy(comm);
}

void checkRequirements() {
  const ncclTeam_t team{6, 1, 1};
  ncclDevResourceRequirements_t req;
  std::memset(&req, 0x5a, sizeof(req));
  ncclLsaBarrierHandle_t lsaBarrier;
  CHECK(ncclLsaBarrierCreateRequirement(team, 4, &lsaBarrier, &req) == ncclSuccess, "%s",
        ncclGetLastError(nullptr));
  CHECK(req.bufferSize == (3 * 4 + 4 * 6) * sizeof(uint32_t) && req.bufferAlign == 4 &&
            req.outBufferHandle == &lsaBarrier.bufHandle && lsaBarrier.nBarriers == 4 &&
            req.next == nullptr && req.ginSignalCount == 0,
        "lsa barrier: %zu bytes, align %zu", req.bufferSize, req.bufferAlign);

  CHECK(ncclLLA2ACalcSlots(100, 12) == 200 && ncclLLA2ACalcSlots(7, 8) == 7 &&
            ncclLLA2ACalcSlots(5, 0) == 0,
        "LLA2ACalcSlots: %d %d", ncclLLA2ACalcSlots(100, 12), ncclLLA2ACalcSlots(7, 8));
  CHECK(ncclLLA2ACalcSlots(-1, 8) == -1 && lastErrorSays("maxElts"), "%s",
        ncclGetLastError(nullptr));
  CHECK(ncclLLA2ACalcSlots(1 << 30, 64) == -1, "slot overflow accepted");
  ncclLLA2AHandle_t a2a;
  CHECK(ncclLLA2ACreateRequirement(3, 10, &a2a, &req) == ncclSuccess, "%s",
        ncclGetLastError(nullptr));
  CHECK(req.bufferSize == 3 * (1 + 2 * 10) * 16 && req.bufferAlign == 16 && a2a.nSlots == 10 &&
            req.outBufferHandle == &a2a.bufHandle,
        "LL a2a: %zu bytes", req.bufferSize);

  ncclComm_t comm;
  setenv("BRAID_HOST_ID", "a", 1);
  CHECK(ncclCommInitAll(&comm, 1, nullptr) == ncclSuccess, "%s", ncclGetLastError(nullptr));
  ncclGinBarrierHandle_t gin;
  CHECK(ncclGinBarrierCreateRequirement(comm, team, 5, &gin, &req) == ncclSuccess, "%s",
        ncclGetLastError(nullptr));
  CHECK(req.ginSignalCount == 30 && req.outGinSignalStart == &gin.signal0 && req.bufferSize == 0,
        "gin barrier: %d signals", req.ginSignalCount);

  // Bad input: NCCL's result codes and a sentence naming the argument.
  CHECK(ncclLsaBarrierCreateRequirement(team, 1, &lsaBarrier, nullptr) == ncclInvalidArgument &&
            lastErrorSays("outReq"),
        "NULL outReq: %s", ncclGetLastError(nullptr));
  CHECK(ncclLsaBarrierCreateRequirement(team, -2, &lsaBarrier, &req) == ncclInvalidArgument &&
            lastErrorSays("nBarriers -2"),
        "negative nBarriers: %s", ncclGetLastError(nullptr));
  CHECK(ncclLLA2ACreateRequirement(1, 1, nullptr, &req) == ncclInvalidArgument &&
            lastErrorSays("outHandle"),
        "NULL outHandle: %s", ncclGetLastError(nullptr));
  CHECK(ncclGinBarrierCreateRequirement(nullptr, team, 1, &gin, &req) == ncclInvalidArgument,
        "NULL comm accepted");
  const ncclTeam_t none = ncclTeamWorld(nullptr);
  CHECK(none.nRanks == 0 && lastErrorSays("ncclTeamWorld"), "NULL comm: {%d,%d,%d} %s", none.nRanks,
        none.rank, none.stride, ncclGetLastError(nullptr));

  // What braid has no counterpart for.
  void* devComm[64];
  ncclDevCommRequirements_t devReqs;  // 2.28's has no initializer; braid reads none of it
  std::memset(&devReqs, 0, sizeof(devReqs));
  CHECK(ncclDevCommCreate(comm, &devReqs, reinterpret_cast<ncclDevComm_t*>(devComm)) ==
                ncclInvalidUsage &&
            lastErrorSays("device API"),
        "ncclDevCommCreate: %s", ncclGetLastError(nullptr));
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 32, 0)
  const ncclTeam_t cft = ncclTeamCft(comm, NCCL_CFT_TEAM_FLAT);
  CHECK(cft.nRanks == 0 && lastErrorSays("CFT"), "ncclTeamCft: %s", ncclGetLastError(nullptr));
  CHECK(ncclTeamCftMultimem(comm).nRanks == 0, "ncclTeamCftMultimem");
  ncclCftLeId le;
  size_t leOffset;
  CHECK(ncclGetPeerDeviceLeInfo(nullptr, 0, 0, &le, &leOffset) == ncclInvalidUsage &&
            lastErrorSays("windows"),
        "ncclGetPeerDeviceLeInfo: %s", ncclGetLastError(nullptr));
  CHECK(ncclGetMultimemDeviceLeInfo(nullptr, 0, &le, &leOffset) == ncclInvalidUsage, "LeInfo");
  CHECK(ncclGetCftDeviceLeInfo(nullptr, 0, 0, cft, &le, &leOffset) == ncclInvalidUsage,
        "CftLeInfo");
  ncclCftBarrierHandle_t cftBarrier;
  CHECK(ncclCftBarrierCreateRequirement(cft, 1, &cftBarrier, &req) == ncclInvalidUsage,
        "CftBarrier");
#endif
  ncclCommDestroy(comm);
  ncclResetDebugInitInternal();  // links and returns: braid reads its logging variables once
}

}  // namespace

int main() {
  setenv("BRAID_TIMEOUT", "20", 0);
  checkLayout("a,a,b,b", 0);      // two hosts of two: LSA 2, rail of 2
  checkLayout("a,a,a,a,b,b", 0);  // uneven hosts: gcd(4, 2) = 2
  checkLayout("a,b,a", 0);        // interleaved: LSA teams of one, the rail is the world
  checkLayout("a,a,a,a", 0);      // one host: LSA is the world, rail of one
  checkLayout("a,a,a,a", 2);      // NCCL_LSA_TEAM_SIZE=2 caps it
  checkRequirements();
  if (failures == 0)
    std::printf("device API host side: all checks passed (NCCL header %d)\n", NCCL_VERSION_CODE);
  return failures == 0 ? 0 : 1;
}
