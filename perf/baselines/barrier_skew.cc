// Splits the 2-rank "barrier, then one 8-byte call" iteration of bench_loop.h
// into its parts, for braid and (built as barrier_skew_mpi) OpenMPI: every rank
// stamps steady_clock (one clock for all processes of a host) when it leaves
// the barrier (s) and when its call returns (e), and rank 0 prints medians of
//   max   max over ranks of e - s: what bench_loop.h reports per iteration;
//   r0/r1 each rank's own e - s;
//   s0-s1 the barrier's exit skew (< 0: the root left first);
//   e1-s0 from the root leaving the barrier to rank 1's call returning: for a
//         broadcast, the root's call up to the message landing, independent of
//         the skew;
//   r0>r1 the share of iterations whose max was the root's.
// Usage: barrier_skew [ITERATIONS] (400; 1 to 1000000), 2 ranks, under braidrun or mpirun.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#ifdef BARRIER_SKEW_MPI
#include <mpi.h>
#else
#include "braid.h"
#endif
static double now() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
static double med(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
int main(int argc, char** argv) {
  long parsed = 400;
  if (argc > 1) {
    char* end = nullptr;
    parsed = std::strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || parsed < 1 || parsed > 1000000) {
      std::fprintf(stderr, "barrier_skew: ITERATIONS must be 1 to 1000000, got '%s'\n", argv[1]);
      return 2;
    }
  }
  const int iters = static_cast<int>(parsed);
  int rank = 0, n = 0;
#ifdef BARRIER_SKEW_MPI
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  auto barrier = [&] { MPI_Barrier(MPI_COMM_WORLD); };
  auto bcast = [&](float* b) { MPI_Bcast(b, 2, MPI_FLOAT, 0, MPI_COMM_WORLD); };
  auto allreduce = [&](float* s, float* r) {
    MPI_Allreduce(s, r, 2, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  };
  auto gather = [&](double* in, double* out, int cnt) {
    MPI_Allgather(in, cnt, MPI_DOUBLE, out, cnt, MPI_DOUBLE, MPI_COMM_WORLD);
  };
#else
  braidComm_t comm;
  if (braidCommInitFromEnv(&comm) != braidSuccess) {
    std::fprintf(stderr, "barrier_skew: braidCommInitFromEnv failed (run under braidrun)\n");
    return 2;
  }
  braidCommUserRank(comm, &rank);
  braidCommCount(comm, &n);
  auto barrier = [&] { braidBarrier(comm, nullptr); };
  auto bcast = [&](float* b) { braidBroadcast(b, b, 2, braidFloat32, 0, comm, nullptr); };
  auto allreduce = [&](float* s, float* r) {
    braidAllReduce(s, r, 2, braidFloat32, braidSum, comm, nullptr);
  };
  auto gather = [&](double* in, double* out, int cnt) {
    braidAllGather(in, out, cnt, braidFloat64, comm, nullptr);
  };
#endif
  if (n != 2) {
    if (rank == 0) std::fprintf(stderr, "barrier_skew: needs 2 ranks, got %d\n", n);
    return 2;
  }
  float a[2] = {1, 1}, b[2] = {0, 0};
  for (int c = 0; c < 2; ++c) {
    std::vector<double> mine(2 * iters), all(2 * iters * n);
    for (int i = -20; i < iters; ++i) {
      barrier();
      double t0 = now();
      if (c == 0)
        bcast(a);
      else
        allreduce(a, b);
      double t1 = now();
      if (i >= 0) {
        mine[2 * i] = t0;
        mine[2 * i + 1] = t1;
      }
    }
    gather(mine.data(), all.data(), 2 * iters);
    if (rank == 0) {
      std::vector<double> mx, r0, r1, skew, r1end, r0end;
      int r0max = 0;
      for (int i = 0; i < iters; ++i) {
        double s0 = all[2 * i], e0 = all[2 * i + 1];
        double s1 = all[2 * iters + 2 * i], e1 = all[2 * iters + 2 * i + 1];
        r0.push_back(e0 - s0);
        r1.push_back(e1 - s1);
        mx.push_back(std::max(e0 - s0, e1 - s1));
        r0max += (e0 - s0) > (e1 - s1);
        skew.push_back(s0 - s1);   // > 0: root left the barrier after rank 1
        r1end.push_back(e1 - s0);  // rank 1 done, from the root's barrier exit
      }
      printf(
          "%-9s max %.1f  r0 %.1f  r1 %.1f  skew(s0-s1) %.1f  e1-s0 %.1f  r0>r1 %d%% (us, medians "
          "of %d)\n",
          c == 0 ? "bcast" : "allreduce", med(mx), med(r0), med(r1), med(skew), med(r1end),
          100 * r0max / iters, iters);
    }
  }
#ifdef BARRIER_SKEW_MPI
  MPI_Finalize();
#else
  braidCommDestroy(comm);
#endif
}
