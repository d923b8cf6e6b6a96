// braid-init-time: what forming a communicator costs, with and without TLS, paired.
//
//   braid-init-time RANKS ROUNDS [VAR=VALUE for A]... -- [VAR=VALUE for B]...
//
// Each round forms a communicator of RANKS ranks (one process each, forked by this one,
// over the TCP bootstrap on loopback) once with A's variables and once with B's, in the
// order A B on even rounds and B A on odd ones, so load that drifts over the run hits both
// alike. The time is from braidGetUniqueId to the last rank's braidCommInitRank returning
// (each rank says so on a pipe, then destroys its communicator and exits). Ranks are fresh
// processes, so every one-off set-up a real rank pays (OpenSSL's contexts among them) is
// in every measurement. Prints each round, then the medians of A and B and the median of
// the per-round ratios B / A.
//
// Public API only; variables are set with setenv before braidGetUniqueId (braid reads them
// there and in braidCommInitRank).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "braid.h"

namespace {

using Settings = std::vector<std::pair<std::string, std::string>>;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Seconds to form one communicator of `nranks` with `settings`; negative on failure.
double formOnce(int nranks, const Settings& settings) {
  for (const auto& [name, value] : settings) setenv(name.c_str(), value.c_str(), 1);
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const auto start = std::chrono::steady_clock::now();
  braidUniqueId id;
  if (braidGetUniqueId(&id) != braidSuccess) {
    std::fprintf(stderr, "braidGetUniqueId failed: %s\n", braidGetLastError(nullptr));
    return -1;
  }
  std::vector<pid_t> children;
  for (int r = 0; r < nranks; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      close(ready[0]);
      braidComm_t comm = nullptr;
      if (braidCommInitRank(&comm, nranks, id, r) != braidSuccess) {
        std::fprintf(stderr, "rank %d: %s\n", r, braidGetLastError(comm));
        _exit(1);
      }
      const char done = 1;
      if (write(ready[1], &done, 1) != 1) _exit(1);
      braidCommDestroy(comm);
      _exit(0);
    }
    if (pid > 0) children.push_back(pid);
  }
  close(ready[1]);
  int told = 0;
  char byte;
  while (told < nranks && read(ready[0], &byte, 1) == 1) ++told;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  close(ready[0]);
  bool ok = told == nranks && static_cast<int>(children.size()) == nranks;
  for (pid_t pid : children) {
    int status = 0;
    ok &= waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  for (const auto& setting : settings) unsetenv(setting.first.c_str());
  return ok ? seconds : -1;
}

bool parseSetting(const char* arg, Settings* out) {
  const char* eq = std::strchr(arg, '=');
  if (eq == nullptr || eq == arg) return false;
  out->emplace_back(std::string(arg, eq - arg), std::string(eq + 1));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s RANKS ROUNDS [VAR=VALUE]... -- [VAR=VALUE]...\n", argv[0]);
    return 2;
  }
  const int nranks = std::atoi(argv[1]);
  const int rounds = std::atoi(argv[2]);
  if (nranks < 1 || nranks > 64 || rounds < 1) {
    std::fprintf(stderr, "RANKS must be 1..64 and ROUNDS at least 1\n");
    return 2;
  }
  Settings a, b;
  Settings* into = &a;
  for (int i = 3; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      into = &b;
    } else if (!parseSetting(argv[i], into)) {
      std::fprintf(stderr, "'%s' is not VAR=VALUE\n", argv[i]);
      return 2;
    }
  }
  std::vector<double> timesA, timesB, ratios;
  for (int round = 0; round < rounds; ++round) {
    double ta, tb;
    if (round % 2 == 0) {
      ta = formOnce(nranks, a);
      tb = formOnce(nranks, b);
    } else {
      tb = formOnce(nranks, b);
      ta = formOnce(nranks, a);
    }
    if (ta < 0 || tb < 0) return 1;
    timesA.push_back(ta);
    timesB.push_back(tb);
    ratios.push_back(tb / ta);
    std::printf("round %d: A %.2f ms  B %.2f ms  B/A %.2f\n", round, ta * 1e3, tb * 1e3, tb / ta);
  }
  std::printf(
      "%d ranks, %d rounds: median A %.2f ms, median B %.2f ms, median B/A %.2f (%.2f-%.2f)\n",
      nranks, rounds, median(timesA) * 1e3, median(timesB) * 1e3, median(ratios),
      *std::min_element(ratios.begin(), ratios.end()),
      *std::max_element(ratios.begin(), ratios.end()));
  return 0;
}
