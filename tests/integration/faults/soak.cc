// Soak: thousands of random collectives across 4 forked ranks, every result
// checked against the reference, with memory flat over time.
//
// All ranks draw the same pseudo-random sequence (one seed), so they call the
// same collectives in the same order. Each iteration picks a communicator
// (transport x forced algorithm, one with BRAID_CHECK=1; made with
// braidCommSplit after setting BRAID_TRANSPORT / BRAID_ALGO / BRAID_CHECK,
// which a new communicator reads), a collective, type, op, count (0 to 2^17,
// log-uniform, odd sizes included), root and in-place form; one iteration in
// five is instead a group that fuses 2-5 all-reduces and a ring send/recv,
// sometimes across two communicators, checked after braidGroupEnd.
//
// Every 50 iterations the ranks agree (an all-reduce of "time is up") whether
// to stop, and sample VmRSS, RssAnon and the live heap (mallinfo2: bytes
// handed out by malloc and not freed). Each must stay within a slack of its
// warmed-up level (the largest sample of the second eighth vs the largest of
// the last quarter). The slacks are generous: VmRSS counts shared-memory FIFO
// pages, first touched over time up to their fixed size; scratch buffers and
// schedule caches are sized by the largest call seen so far, a maximum that
// creeps up for long with random sizes. The sharp check is the replay: after
// the run, every rank repeats its first 1000 iterations (same calls, same
// data), which need nothing new, and the live heap may grow by at most
// 512 KiB over those ~1700 calls. The harness fixes malloc's mmap threshold
// so that freed test buffers leave RSS instead of lingering.
//
//   braid_soak [seconds]        (default 30; BRAID_SOAK_SECONDS overrides)
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "braid.h"
#include "integration/faults/fault_verdict.h"
#include "integration/faults/process_census.h"
#include "integration/multiprocess/rank_processes.h"
#include "integration/multiprocess/shm_leaks.h"
#include "support/collective_cases.h"
#include "support/collective_sweep.h"
#include "support/input_pattern.h"
#include "support/reference.h"

using namespace braid::testing;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kRanks = 4;
constexpr int kAgreeEvery = 50;
constexpr long kRssSlackKiB = 64 * 1024;   // VmRSS: includes FIFO pages touched over time
constexpr long kAnonSlackKiB = 32 * 1024;  // RssAnon: the heap's pages, fragmentation included
// Bytes malloc has handed out and not had back. Scratch buffers and caches
// are sized by the largest call seen so far, and with random sizes that
// maximum creeps up for a long time: the replay below is the sharp check.
constexpr long kLiveSlackKiB = 32 * 1024;
constexpr long kReplayIterations = 1000;
constexpr long kReplaySlackKiB = 512;  // replayed calls need nothing new: ~0.3 B per call
constexpr uint64_t kSeed = 0x50a4;

struct Flavor {
  const char* transport;
  const char* algorithm;
  const char* check;
};
constexpr Flavor kFlavors[] = {
    {"shm", "", "0"},         {"shm", "ring", "0"},    {"shm", "tree", "0"},  {"shm", "rd", "0"},
    {"shm", "pairwise", "0"}, {"shm", "direct", "0"},  {"shm", "", "1"},      {"socket", "", "0"},
    {"socket", "ring", "0"},  {"socket", "tree", "0"}, {"socket", "rd", "0"},
};
constexpr int kFlavorCount = sizeof(kFlavors) / sizeof(kFlavors[0]);

const braidDataType_t kTypes[] = {braidInt8,    braidUint8,   braidInt32,   braidUint32,
                                  braidInt64,   braidUint64,  braidFloat16, braidFloat32,
                                  braidFloat64, braidBfloat16};

struct Stats {
  long iterations = 0, calls = 0, groups = 0, wrong = 0;
  std::vector<long> rssSamples, anonSamples, liveSamples;
};

size_t randomCount(std::mt19937_64& rng) {
  const int bits = static_cast<int>(rng() % 18);
  return bits == 0 ? 0 : static_cast<size_t>(rng() % (size_t{1} << bits)) + 1;
}

// 2-5 fused all-reduces and a ring send/recv, on one or two communicators.
int runFusedGroup(const std::vector<braidComm_t>& comms, std::mt19937_64& rng, int rank,
                  uint64_t seed, Stats* stats) {
  struct Call {
    braidComm_t comm;
    braidDataType_t type;
    braidRedOp_t op;
    size_t count;
    std::vector<char> send, recv;
    bool ring;
  };
  std::vector<Call> calls(2 + rng() % 4 + 1);
  for (size_t i = 0; i < calls.size(); ++i) {
    Call& c = calls[i];
    c.comm = comms[rng() % comms.size()];
    c.type = kTypes[rng() % 10];
    c.op = static_cast<braidRedOp_t>(rng() % braidNumOps);
    c.count = randomCount(rng) / 4;
    c.ring = i + 1 == calls.size();
    const size_t bytes = c.count * elementBytes(c.type);
    c.send.resize(bytes);
    c.recv.resize(bytes);
    InputPattern pattern =
        c.ring ? InputPattern::forMove(c.type, seed + i) : InputPattern(c.type, c.op, seed + i);
    pattern.fill(rank, 0, c.count, c.send.data());
  }
  braidGroupStart();
  for (Call& c : calls) {
    if (c.ring) {
      braidSend(c.send.data(), c.count, c.type, (rank + 1) % kRanks, c.comm, nullptr);
      braidRecv(c.recv.data(), c.count, c.type, (rank + kRanks - 1) % kRanks, c.comm, nullptr);
    } else {
      braidAllReduce(c.send.data(), c.recv.data(), c.count, c.type, c.op, c.comm, nullptr);
    }
  }
  braidResult_t result = braidGroupEnd();
  ++stats->groups;
  stats->calls += static_cast<long>(calls.size());
  if (result != braidSuccess) {
    std::fprintf(stderr, "rank %d: fused group failed: %s\n", rank, braidGetLastError(nullptr));
    return 1;
  }
  int wrong = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    const Call& c = calls[i];
    std::string failure =
        c.ring ? checkCopied(c.type, c.recv.data(), c.count,
                             sourceFromPattern(InputPattern::forMove(c.type, seed + i)),
                             (rank + kRanks - 1) % kRanks, 0)
               : checkReduced(c.type, c.op, kRanks, c.recv.data(), c.count,
                              sourceFromPattern(InputPattern(c.type, c.op, seed + i)), 0);
    if (!failure.empty()) {
      std::fprintf(stderr, "rank %d: fused call %zu: %s\n", rank, i, failure.c_str());
      ++wrong;
    }
  }
  return wrong;
}

int runOne(const std::vector<braidComm_t>& comms, std::mt19937_64& rng, int rank, uint64_t seed,
           Stats* stats) {
  if (rng() % 5 == 0) return runFusedGroup(comms, rng, rank, seed, stats);
  const std::vector<Collective> collectives = allCollectives();
  const int flavor = static_cast<int>(rng() % comms.size());
  CollectiveCase c;
  c.collective = collectives[rng() % collectives.size()];
  c.type = kTypes[rng() % 10];
  c.op = static_cast<braidRedOp_t>(rng() % braidNumOps);
  c.count = randomCount(rng);
  if (c.collective == Collective::kAllToAll || c.collective == Collective::kAllToAllv ||
      c.collective == Collective::kAllGather || c.collective == Collective::kGather ||
      c.collective == Collective::kReduceScatter || c.collective == Collective::kScatter ||
      c.collective == Collective::kSendRecvAllPairs) {
    c.count /= kRanks;  // these move nranks blocks of `count`
  }
  c.root = static_cast<int>(rng() % kRanks);
  c.inPlace = rng() % 2 == 0;
  ++stats->calls;
  CaseOutcome outcome = runCase(comms[flavor], c, seed);
  if (outcome.ok()) return 0;
  std::fprintf(stderr, "rank %d: %s on %s/%s: %s\n", rank, c.describe().c_str(),
               kFlavors[flavor].transport, kFlavors[flavor].algorithm, outcome.failure.c_str());
  return outcome.result == braidSuccess ? 1 : -1;  // -1: the communicator is broken
}

// Makes one communicator per flavour by splitting `world` under its settings.
bool makeFlavors(braidComm_t world, std::vector<braidComm_t>* comms) {
  for (const Flavor& f : kFlavors) {
    setenv("BRAID_TRANSPORT", f.transport, 1);
    setenv("BRAID_ALGO", f.algorithm, 1);
    setenv("BRAID_CHECK", f.check, 1);
    braidComm_t comm = nullptr;
    if (braidCommSplit(world, 0, 0, &comm) != braidSuccess) {
      std::fprintf(stderr, "split for %s/%s: %s\n", f.transport, f.algorithm,
                   braidGetLastError(world));
      return false;
    }
    comms->push_back(comm);
  }
  return true;
}

// Bytes the program holds from malloc (small blocks in use plus mmapped
// ones): a leak grows this; heap fragmentation grows only RssAnon.
long liveHeapKiB() {
  struct mallinfo2 m = mallinfo2();
  return static_cast<long>((m.uordblks + m.hblkhd) / 1024);
}

struct Growth {
  long warm = 0, late = 0;  // largest sample of the second eighth / of the last quarter
};

Growth growth(const std::vector<long>& samples) {
  Growth g;
  const size_t n = samples.size();
  for (size_t i = n / 8; i < std::max(n / 4, n / 8 + 1) && i < n; ++i)
    g.warm = std::max(g.warm, samples[i]);
  for (size_t i = n - n / 4; i < n; ++i) g.late = std::max(g.late, samples[i]);
  return g;
}

int runRank(RankProcesses& p, int rank, double seconds) {
  // A fixed mmap threshold: buffers of random size past 64 KiB go back to the
  // kernel when freed, instead of (glibc's default) raising the threshold and
  // keeping them in a heap whose fragmentation would look like growth.
  mallopt(M_MMAP_THRESHOLD, 64 * 1024);
  const Census before = takeCensus();
  braidComm_t world = p.joinCommunicator(rank);
  if (world == nullptr) return 2;
  std::vector<braidComm_t> comms;
  if (!makeFlavors(world, &comms)) return 2;
  std::mt19937_64 rng(kSeed);
  Stats stats;
  const auto start = Clock::now();
  for (int stop = 0; !stop; ++stats.iterations) {
    const int r = runOne(comms, rng, rank, kSeed + static_cast<uint64_t>(stats.iterations), &stats);
    if (r < 0) return 1;
    stats.wrong += r;
    if ((stats.iterations + 1) % kAgreeEvery == 0) {
      stats.rssSamples.push_back(residentKiB());
      stats.anonSamples.push_back(residentKiB("RssAnon"));
      stats.liveSamples.push_back(liveHeapKiB());
      int32_t late = std::chrono::duration<double>(Clock::now() - start).count() > seconds;
      if (braidAllReduce(&late, &stop, 1, braidInt32, braidMax, world, nullptr) != braidSuccess)
        return 1;
    }
  }
  // Replay: the first iterations again, same calls and data. Every buffer,
  // cache and ring has already grown to what they need, so the live heap
  // must not grow; if it does, something is kept per call.
  std::mt19937_64 replayRng(kSeed);
  const long replayed = std::min<long>(stats.iterations, kReplayIterations);
  const long liveBeforeReplay = liveHeapKiB();
  Stats replayStats;
  for (long i = 0; i < replayed; ++i) {
    const int r = runOne(comms, replayRng, rank, kSeed + static_cast<uint64_t>(i), &replayStats);
    if (r < 0) return 1;
    stats.wrong += r;
  }
  const long liveAfterReplay = liveHeapKiB();
  for (braidComm_t c : comms) braidCommDestroy(c);
  braidCommDestroy(world);
  const Census after = settle(before, 5);
  const Growth rss = growth(stats.rssSamples), anon = growth(stats.anonSamples);
  const Growth live = growth(stats.liveSamples);
  std::vector<std::string> grew;
  if (rss.late > rss.warm + kRssSlackKiB) grew.push_back("VmRSS");
  if (anon.late > anon.warm + kAnonSlackKiB) grew.push_back("RssAnon");
  if (live.late > live.warm + kLiveSlackKiB) grew.push_back("live heap");
  if (liveAfterReplay > liveBeforeReplay + kReplaySlackKiB) grew.push_back("live heap on replay");
  for (const std::string& what : grew) {
    std::fprintf(stderr, "rank %d: FAILED: %s grew past its slack\n", rank, what.c_str());
  }
  const bool flat = grew.empty();
  const bool clean = after.fds == before.fds && after.threads == before.threads;
  std::printf(
      "rank %d: %ld iterations, %ld calls (%ld fused groups) in %.1f s, %ld wrong; KiB warm -> "
      "late: VmRSS %ld -> %ld, RssAnon %ld -> %ld, live heap %ld -> %ld%s; %s before, %s after\n",
      rank, stats.iterations, stats.calls, stats.groups,
      std::chrono::duration<double>(Clock::now() - start).count(), stats.wrong, rss.warm, rss.late,
      anon.warm, anon.late, live.warm, live.late, flat ? "" : " GREW", before.describe().c_str(),
      after.describe().c_str());
  std::printf("rank %d: replayed %ld iterations (%ld calls): live heap %ld -> %ld KiB (%+ld)\n",
              rank, replayed, replayStats.calls, liveBeforeReplay, liveAfterReplay,
              liveAfterReplay - liveBeforeReplay);
  const size_t n = stats.rssSamples.size();
  std::string trend;
  for (int q = 1; q <= 8 && n > 0; ++q) {
    const size_t i = n * q / 8 - (q == 8);
    trend += " " + std::to_string(stats.rssSamples[i]) + " (anon " +
             std::to_string(stats.anonSamples[i]) + ", live " +
             std::to_string(stats.liveSamples[i]) + ")";
  }
  std::printf("rank %d: VmRSS KiB at each eighth of the run:%s\n", rank, trend.c_str());
  std::fflush(stdout);
  return stats.wrong == 0 && flat && clean ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 30;
  if (const char* v = std::getenv("BRAID_SOAK_SECONDS")) seconds = std::atof(v);
  setenv("BRAID_TIMEOUT", "60", 1);
  const std::set<std::string> segmentsBefore = braidShmSegments();
  RankProcesses p(kRanks);
  if (!p.startWithUniqueId([&](int rank) { return runRank(p, rank, seconds); })) return 2;
  std::vector<ChildExit> exits = p.waitAll(seconds + 300);
  bool passed = true;
  for (int r = 0; r < kRanks; ++r) {
    if (!exits[r].exited || exits[r].code != 0) {
      std::fprintf(stderr, "FAILED: rank %d ended with code %d signal %d\n", r, exits[r].code,
                   exits[r].signal);
      passed = false;
    }
  }
  passed = noShmLeaked(segmentsBefore) && passed;
  std::printf("%s\n", passed ? "PASSED" : "FAILED");
  return passed ? 0 : 1;
}
