// Checks of the ib transport that need a real RDMA device (run inside the soft-RoCE
// guest, tests/rdma/guest), on the public API with forked ranks:
//
//   braid_ib_checks regcache   buffers freed (munmap) and mapped again at the same address,
//                              and heap blocks reused, between calls: every result must be
//                              right (a cache that kept the old pages' registration would
//                              move the old bytes);
//   braid_ib_checks badconfig  a GID index past the table, an unset GID, a device or port that
//                              does not exist, on one rank or all: init fails on every rank
//                              with an error naming the variable, or the rank at fault.
// Exits 0 when every check passed; each failure is a line on stderr.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "braid.h"
#include "integration/multiprocess/rank_processes.h"

using braid::testing::ChildExit;
using braid::testing::RankProcesses;

namespace {

constexpr double kDeadlineSeconds = 240;

int fail(int rank, const std::string& what) {
  std::fprintf(stderr, "rank %d: FAIL: %s\n", rank, what.c_str());
  return 1;
}

// Runs `body` on `nranks` forked ranks with BRAID_TRANSPORT=ib; true when all exit 0.
bool onRanks(int nranks, const std::function<int(RankProcesses&, int)>& body) {
  setenv("BRAID_TRANSPORT", "ib", 1);
  setenv("BRAID_TIMEOUT", "60", 0);
  RankProcesses processes(nranks);
  if (!processes.startWithUniqueId([&](int rank) { return body(processes, rank); })) return false;
  bool ok = true;
  for (const ChildExit& e : processes.waitAll(kDeadlineSeconds)) ok &= e.exited && e.code == 0;
  return ok;
}

// --- regcache ----------------------------------------------------------------------------------

bool checkAllGather(braidComm_t comm, int rank, int nranks, int32_t* send, int32_t* recv,
                    size_t count, int round) {
  for (size_t i = 0; i < count; ++i)
    send[i] = static_cast<int32_t>(round * 1000003 + rank * 7919 + i);
  std::memset(recv, 0xff, count * nranks * sizeof(int32_t));
  if (braidAllGather(send, recv, count, braidInt32, comm, nullptr) != braidSuccess) {
    fail(rank, std::string("braidAllGather: ") + braidGetLastError(comm));
    return false;
  }
  for (int r = 0; r < nranks; ++r) {
    for (size_t i = 0; i < count; i += 997) {
      const int32_t want = static_cast<int32_t>(round * 1000003 + r * 7919 + i);
      if (recv[r * count + i] != want) {
        fail(rank, "round " + std::to_string(round) + ": element " + std::to_string(i) +
                       " from rank " + std::to_string(r) + " is " +
                       std::to_string(recv[r * count + i]) + ", expected " + std::to_string(want));
        return false;
      }
    }
  }
  return true;
}

int regcacheRank(RankProcesses& processes, int rank, int nranks) {
  braidComm_t comm = processes.joinCommunicator(rank);
  if (comm == nullptr) return 1;
  constexpr size_t kCount = 512 << 10;  // 2 MiB of int32
  const size_t sendBytes = kCount * sizeof(int32_t), recvBytes = sendBytes * nranks;
  void* lastSend = nullptr;
  int reused = 0;
  for (int round = 0; round < 4; ++round) {
    void* send =
        mmap(nullptr, sendBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void* recv =
        mmap(nullptr, recvBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (send == MAP_FAILED || recv == MAP_FAILED) return fail(rank, "mmap failed");
    reused += send == lastSend ? 1 : 0;
    lastSend = send;
    // Twice on the same mapping (the cache's hit), then the mapping goes.
    for (int again = 0; again < 2; ++again) {
      if (!checkAllGather(comm, rank, nranks, static_cast<int32_t*>(send),
                          static_cast<int32_t*>(recv), kCount, round * 2 + again)) {
        return 1;
      }
    }
    munmap(send, sendBytes);
    munmap(recv, recvBytes);
  }
  if (reused == 0) return fail(rank, "no mapping came back at a freed one's address: untested");
  // Heap blocks below the mmap threshold: reused memory, same pages, new contents.
  for (int round = 0; round < 20; ++round) {
    std::vector<int32_t> send(4099 + round), recv((4099 + round) * nranks);
    if (!checkAllGather(comm, rank, nranks, send.data(), recv.data(), send.size(), 100 + round)) {
      return 1;
    }
  }
  braidCommDestroy(comm);
  std::printf(
      "rank %d: regcache: 8 all-gathers on remapped buffers (%d address reuses) and 20 "
      "on heap blocks right\n",
      rank, reused);
  return 0;
}

// --- badconfig ---------------------------------------------------------------------------------

struct BadCase {
  const char* name;
  int badRank;  // -1: every rank
  const char* variable;
  const char* value;
  const char* mustSay;  // in the bad rank's error
};

int badConfigRank(RankProcesses& processes, int rank, const BadCase& c) {
  if (c.badRank < 0 || c.badRank == rank) setenv(c.variable, c.value, 1);
  braidUniqueId id;
  if (!processes.receiveUniqueId(rank, &id)) return fail(rank, "no unique id");
  braidComm_t comm = nullptr;
  const braidResult_t r = braidCommInitRank(&comm, 2, id, rank);
  if (r == braidSuccess) {
    braidCommDestroy(comm);
    return fail(rank, std::string(c.name) + ": init succeeded");
  }
  const std::string error = braidGetLastError(nullptr);
  const bool bad = c.badRank < 0 || c.badRank == rank;
  const std::string want = bad ? c.mustSay : "rank " + std::to_string(c.badRank);
  if (error.find(want) == std::string::npos) {
    return fail(rank, std::string(c.name) + ": the error does not say '" + want + "': " + error);
  }
  std::printf("rank %d: %s: %s\n", rank, c.name, error.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "regcache") {
    const int nranks = 2;
    const bool ok =
        onRanks(nranks, [&](RankProcesses& p, int rank) { return regcacheRank(p, rank, nranks); });
    std::printf("%s: regcache\n", ok ? "PASSED" : "FAILED");
    return ok ? 0 : 1;
  }
  if (what == "badconfig") {
    const BadCase cases[] = {
        {"GID index past the table on rank 1", 1, "BRAID_IB_GID_INDEX", "255",
         "BRAID_IB_GID_INDEX=255"},
        {"unset GID on rank 0", 0, "BRAID_IB_GID_INDEX", "7", "holds no address"},
        {"no such device", -1, "BRAID_IB_HCA", "nosuch0", "BRAID_IB_HCA='nosuch0'"},
        {"no such port on rank 1", 1, "BRAID_IB_HCA", "rxe0:2", "names no active port"},
    };
    bool ok = true;
    for (const BadCase& c : cases) {
      const bool passed =
          onRanks(2, [&](RankProcesses& p, int rank) { return badConfigRank(p, rank, c); });
      std::printf("%s: %s\n", passed ? "passed" : "FAILED", c.name);
      ok &= passed;
    }
    std::printf("%s: badconfig\n", ok ? "PASSED" : "FAILED");
    return ok ? 0 : 1;
  }
  std::fprintf(stderr, "usage: %s regcache|badconfig\n", argv[0]);
  return 2;
}
