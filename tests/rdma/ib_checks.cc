// Checks of the ib transport that need a real RDMA device (run inside the soft-RoCE
// guest, tests/rdma/guest), on the public API with forked ranks:
//
//   braid_ib_checks regcache   buffers freed (munmap) and mapped again at the same address,
//                              and heap blocks reused, between calls: every result must be
//                              right (a cache that kept the old pages' registration would
//                              move the old bytes);
//   braid_ib_checks badconfig  a GID index past the table, an unset GID, a device or port that
//                              does not exist, on one rank or all: init fails on every rank
//                              with an error naming the variable, or the rank at fault;
//   braid_ib_checks protocol   clear-to-sends and credits (ib_connector.cc): messages around
//                              the credit size, received late, must arrive intact; a receive
//                              whose size differs from the send fails on both ranks naming
//                              the other, with and without a credit; a sender whose
//                              receiver never posts fails with braidTimeout naming it.
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

// --- protocol ----------------------------------------------------------------------------------

// The default credit over ib: BRAID_IB_CREDIT_BYTES unset, it covers a message of up to
// 64 KiB (IbConnector::kDefaultCreditBytes); larger ones go straight into the receiver's
// buffer once it posts.
constexpr size_t kCredit = 64 << 10;

// A warm-up message each way: afterwards every connector has granted its credits.
bool warmUp(braidComm_t comm, int rank) {
  int32_t out = rank, in = -1;
  const int peer = 1 - rank;
  for (int turn = 0; turn < 2; ++turn) {
    const braidResult_t r = rank == turn ? braidSend(&out, 1, braidInt32, peer, comm, nullptr)
                                         : braidRecv(&in, 1, braidInt32, peer, comm, nullptr);
    if (r != braidSuccess)
      return fail(rank, std::string("warm-up: ") + braidGetLastError(comm)) == 0;
  }
  if (in != peer) return fail(rank, "warm-up: wrong value") == 0;
  return true;
}

uint8_t pattern(size_t size, size_t i) { return static_cast<uint8_t>((size * 31 + i * 7) >> 2); }

// Sizes either side of the credit, sent while the receiver is still asleep: the heads
// land in credits before any receive is posted.
int lateReceiverRank(RankProcesses& processes, int rank) {
  braidComm_t comm = processes.joinCommunicator(rank);
  if (comm == nullptr || !warmUp(comm, rank)) return 1;
  const size_t sizes[] = {0,   1, kCredit - 1, kCredit, kCredit + 1, 2 * kCredit + 5, (8 << 20) + 3,
                          4099};
  if (rank == 1) sleep(1);
  for (size_t size : sizes) {
    std::vector<uint8_t> buf(size + 1);
    if (rank == 0) {
      for (size_t i = 0; i < size; ++i) buf[i] = pattern(size, i);
      if (braidSend(buf.data(), size, braidUint8, 1, comm, nullptr) != braidSuccess) {
        return fail(rank, "send of " + std::to_string(size) + ": " + braidGetLastError(comm));
      }
      continue;
    }
    std::memset(buf.data(), 0xee, buf.size());
    if (braidRecv(buf.data(), size, braidUint8, 0, comm, nullptr) != braidSuccess) {
      return fail(rank, "receive of " + std::to_string(size) + ": " + braidGetLastError(comm));
    }
    for (size_t i = 0; i < size; ++i) {
      if (buf[i] != pattern(size, i)) {
        return fail(rank, "message of " + std::to_string(size) + " bytes: byte " +
                              std::to_string(i) + " wrong");
      }
    }
    if (buf[size] != 0xee)
      return fail(rank, "a write past a " + std::to_string(size) + "-byte receive");
  }
  braidCommDestroy(comm);
  std::printf("rank %d: late receiver: 8 messages of 0 B to 8 MiB right\n", rank);
  return 0;
}

struct Mismatch {
  const char* name;
  size_t sent, expected;
  bool warm;  // after a warm-up: the head goes through a credit
};

// Rank 0 sends `sent` bytes, rank 1 expects `expected`: both must fail, each naming the
// other, in its own call or (a sender whose message fitted a credit, so its send
// completed) in the next one; the deadline of the test catches a hang.
int mismatchRank(RankProcesses& processes, int rank, const Mismatch& c) {
  braidComm_t comm = processes.joinCommunicator(rank);
  if (comm == nullptr || (c.warm && !warmUp(comm, rank))) return 1;
  std::vector<uint8_t> buf(std::max(c.sent, c.expected) + 1, 1);
  braidResult_t r = rank == 0 ? braidSend(buf.data(), c.sent, braidUint8, 1, comm, nullptr)
                              : braidRecv(buf.data(), c.expected, braidUint8, 0, comm, nullptr);
  if (r == braidSuccess && rank == 0) r = braidRecv(buf.data(), 1, braidUint8, 1, comm, nullptr);
  if (r == braidSuccess) return fail(rank, std::string(c.name) + ": no error");
  const std::string error = braidGetLastError(comm);
  if (error.find("rank " + std::to_string(1 - rank)) == std::string::npos) {
    return fail(rank, std::string(c.name) + ": the error does not name rank " +
                          std::to_string(1 - rank) + ": " + error);
  }
  std::printf("rank %d: %s: %s\n", rank, c.name, error.c_str());
  braidCommDestroy(comm);
  return 0;
}

// The receiver never posts: a message that fits a credit completes (its head went ahead),
// a larger one must end in braidTimeout naming the receiver, not hang.
int absentReceiverRank(RankProcesses& processes, int rank) {
  braidComm_t comm = processes.joinCommunicator(rank);
  if (comm == nullptr || !warmUp(comm, rank)) return 1;
  if (rank == 1) {
    // Alive and silent until the sender is done: the sender must time out.
    return processes.awaitRelease(1) ? 0 : fail(1, "no release");
  }
  std::vector<uint8_t> buf(size_t{8} << 20, 3);
  if (braidSend(buf.data(), 100, braidUint8, 1, comm, nullptr) != braidSuccess) {
    return fail(rank, std::string("a send that fits a credit: ") + braidGetLastError(comm));
  }
  const braidResult_t r = braidSend(buf.data(), buf.size(), braidUint8, 1, comm, nullptr);
  const std::string error = braidGetLastError(comm);
  if (r != braidTimeout || error.find("rank 1") == std::string::npos) {
    return fail(rank, "8 MiB to a receiver that never posts: result " + std::to_string(r) +
                          ", not a timeout naming rank 1: " + error);
  }
  std::printf("rank 0: absent receiver: %s\n", error.c_str());
  processes.signalProgress(0);
  return 0;
}

// Rank 1 stays silent until rank 0 has timed out (or the deadline passes).
bool absentReceiver() {
  setenv("BRAID_TRANSPORT", "ib", 1);
  setenv("BRAID_TIMEOUT", "3", 1);
  RankProcesses processes(2);
  if (!processes.startWithUniqueId([&](int rank) { return absentReceiverRank(processes, rank); })) {
    return false;
  }
  const bool timedOut = processes.waitProgress({0}, 60);
  processes.release(1);
  bool ok = timedOut;
  for (const ChildExit& e : processes.waitAll(kDeadlineSeconds)) ok &= e.exited && e.code == 0;
  return ok;
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
  if (what == "protocol") {
    bool ok = onRanks(2, [&](RankProcesses& p, int rank) { return lateReceiverRank(p, rank); });
    std::printf("%s: late receiver\n", ok ? "passed" : "FAILED");
    const Mismatch cases[] = {
        {"100 B sent, 200 B expected, first message", 100, 200, false},
        {"100 B sent, 200 B expected, through a credit", 100, 200, true},
        {"100 B sent, 300000 B expected, through a credit", 100, 300000, true},
        {"300000 B sent, 100 B expected, through a credit", 300000, 100, true},
        {"3 MiB sent, 2 MiB expected, through a credit", 3 << 20, 2 << 20, true},
        {"9 MiB sent, 8 MiB expected, through a credit", 9 << 20, 8 << 20, true},
    };
    for (const Mismatch& c : cases) {
      const bool passed =
          onRanks(2, [&](RankProcesses& p, int rank) { return mismatchRank(p, rank, c); });
      std::printf("%s: mismatch, %s\n", passed ? "passed" : "FAILED", c.name);
      ok &= passed;
    }
    const bool absent = absentReceiver();
    std::printf("%s: absent receiver\n", absent ? "passed" : "FAILED");
    ok &= absent;
    std::printf("%s: protocol\n", ok ? "PASSED" : "FAILED");
    return ok ? 0 : 1;
  }
  std::fprintf(stderr, "usage: %s regcache|badconfig|protocol\n", argv[0]);
  return 2;
}
