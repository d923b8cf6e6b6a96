// An outside program: forks N rank processes that join one communicator
// (unique id through a pipe, or braidCommInitFromEnv with BRAID_RANK /
// BRAID_NRANKS / BRAID_ROOT), run every collective x type x op at counts
// {0, 1, 7, 1000003} on the given transport, and check every answer.
// Exits 0 iff every rank saw only correct results.
//
//   braid_mp_collectives <shm|socket|ib|mixed> <nranks> [--env] [--picks] [--few] [--large N]
//   [--counts A,B,..]
//
// --env: join with braidCommInitFromEnv instead of a unique id.
// --picks: at 1000003 elements run only the unit sweeps' handful of (type, op)
//          picks, for runs whose point is elsewhere (the init path).
// --few:   at the small counts too, only those picks (each collective, count and
//          element size still seen; for machines where each case is costly).
// --large N: the large count (default 1000003; 0: none).
// --counts: the small counts to sweep (default 0,1,7), e.g. where each case is
//          costly (an emulated machine) or a transport needs 4099 too.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "braid.h"
#include "rank_processes.h"
#include "support/collective_cases.h"
#include "support/collective_sweep.h"

using namespace braid::testing;

namespace {

constexpr double kDeadlineSeconds = 280;  // below the ctest TIMEOUT, so we report, not ctest

// A free TCP port on the loopback for BRAID_ROOT (released just before rank 0 binds it).
int freeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

int runRank(RankProcesses& processes, int rank, int nranks, bool fromEnv,
            const std::vector<CollectiveCase>& cases) {
  braidComm_t comm = nullptr;
  braidResult_t result;
  if (fromEnv) {
    setenv("BRAID_RANK", std::to_string(rank).c_str(), 1);
    result = braidCommInitFromEnv(&comm);
  } else {
    braidUniqueId id;
    if (!processes.receiveUniqueId(rank, &id)) {
      std::fprintf(stderr, "rank %d: no unique id from the parent\n", rank);
      return 2;
    }
    result = braidCommInitRank(&comm, nranks, id, rank);
  }
  if (result != braidSuccess) {
    std::fprintf(stderr, "rank %d: init failed: %s: %s\n", rank, braidGetErrorString(result),
                 braidGetLastError(nullptr));
    return 2;
  }
  int reported = 0;
  int failures = runCases(comm, cases, 4242, [&](const CollectiveCase& c, const CaseOutcome& o) {
    if (reported++ < 10) {
      std::fprintf(stderr, "rank %d: FAILED %s: %s\n", rank, c.describe().c_str(),
                   o.failure.c_str());
    }
  });
  if (failures > 0) std::fprintf(stderr, "rank %d: %d cases failed\n", rank, failures);
  braidResult_t destroyed = braidCommDestroy(comm);
  if (destroyed != braidSuccess) {
    std::fprintf(stderr, "rank %d: braidCommDestroy: %s\n", rank, braidGetErrorString(destroyed));
  }
  return failures == 0 && destroyed == braidSuccess ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s <shm|socket|ib|mixed> <nranks> [--env] [--picks] [--few] [--large N] "
                 "[--counts A,B,..]\n",
                 argv[0]);
    return 2;
  }
  const std::string transport = argv[1];
  const int nranks = std::atoi(argv[2]);
  bool fromEnv = false, largePicksOnly = false, smallPicksOnly = false;
  std::vector<size_t> counts = {0, 1, 7};
  size_t largeCount = 1000003;
  for (int i = 3; i < argc; ++i) {
    fromEnv |= std::strcmp(argv[i], "--env") == 0;
    largePicksOnly |= std::strcmp(argv[i], "--picks") == 0;
    smallPicksOnly |= std::strcmp(argv[i], "--few") == 0;
    if (std::strcmp(argv[i], "--large") == 0 && i + 1 < argc) {
      largeCount = std::strtoull(argv[++i], nullptr, 10);
    }
    if (std::strcmp(argv[i], "--counts") == 0 && i + 1 < argc) {
      counts.clear();
      for (const char* p = argv[++i]; *p != '\0';) {
        char* end = nullptr;
        counts.push_back(std::strtoull(p, &end, 10));
        if (end == p || (*end != ',' && *end != '\0')) {
          std::fprintf(stderr, "--counts: expected numbers separated by commas, got '%s'\n",
                       argv[i]);
          return 2;
        }
        p = *end == ',' ? end + 1 : end;
      }
    }
  }
  if (nranks <= 0) {
    std::fprintf(stderr, "nranks must be positive\n");
    return 2;
  }
  setenv("BRAID_TRANSPORT", transport.c_str(), 1);
  setenv("BRAID_TIMEOUT", "60", 0);  // keep a value the caller set
  if (fromEnv) {
    std::string root = "127.0.0.1:" + std::to_string(freeLoopbackPort());
    setenv("BRAID_ROOT", root.c_str(), 1);
    setenv("BRAID_NRANKS", std::to_string(nranks).c_str(), 1);
  }
  SweepSpec spec;
  spec.collectives = allCollectives();
  spec.counts = counts;
  spec.largeCount = largeCount;
  spec.largeEveryTypeAndOp = !largePicksOnly;
  spec.smallPicksOnly = smallPicksOnly;
  const std::vector<CollectiveCase> cases = sweepCases(spec, nranks);

  const auto start = std::chrono::steady_clock::now();
  RankProcesses processes(nranks);
  if (!processes.start(
          [&](int rank) { return runRank(processes, rank, nranks, fromEnv, cases); })) {
    return 2;
  }
  if (!fromEnv) {
    braidUniqueId id;
    braidResult_t result = braidGetUniqueId(&id);
    if (result != braidSuccess) {
      std::fprintf(stderr, "braidGetUniqueId: %s\n", braidGetLastError(nullptr));
      return 2;  // the destructor kills the waiting children
    }
    processes.sendUniqueId(id);
  }
  bool allPassed = true;
  std::vector<ChildExit> exits = processes.waitAll(kDeadlineSeconds);
  for (int r = 0; r < nranks; ++r) {
    const ChildExit& e = exits[r];
    if (e.exited && e.code == 0) continue;
    allPassed = false;
    std::string how = e.overdue  ? "still running at the deadline (killed)"
                      : e.exited ? "exit code " + std::to_string(e.code)
                                 : "killed by signal " + std::to_string(e.signal);
    std::fprintf(stderr, "rank %d: %s\n", r, how.c_str());
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %zu cases on %d %s ranks (%s init) in %.1f s\n", allPassed ? "PASSED" : "FAILED",
              cases.size(), nranks, transport.c_str(), fromEnv ? "env" : "unique-id", seconds);
  return allPassed ? 0 : 1;
}
