/* The comparison baseline: MPI_Allreduce (float sum) timed the way braid-perf
 * times braidAllReduce (warm-up, barrier, n iterations, average per call,
 * busbw = algbw * 2(n-1)/n), so both can run side by side in one minute.
 * Usage: mpirun -np N mpi_allreduce [min_bytes max_bytes factor iters] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  size_t minBytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 8;
  size_t maxBytes = argc > 2 ? strtoull(argv[2], NULL, 10) : (64u << 20);
  int factor = argc > 3 ? atoi(argv[3]) : 4;
  int iters = argc > 4 ? atoi(argv[4]) : 20;
  float* send = calloc(maxBytes / 4 + 1, 4);
  float* recv = calloc(maxBytes / 4 + 1, 4);
  if (rank == 0) printf("# MPI_Allreduce float sum, %d ranks\n#%12s %12s %10s %10s\n", n, "size(B)",
                        "time(us)", "algbw", "busbw");
  for (size_t bytes = minBytes; bytes <= maxBytes; bytes *= factor) {
    int count = (int)(bytes / 4);
    for (int i = 0; i < 3; ++i) MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i)
      MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double local = (MPI_Wtime() - t0) / iters, t;
    MPI_Allreduce(&local, &t, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    t /= n;
    double algbw = (double)count * 4 / t / 1e9;
    if (rank == 0)
      printf(" %12zu %12.2f %10.2f %10.2f\n", (size_t)count * 4, t * 1e6, algbw,
             algbw * 2.0 * (n - 1) / n);
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
