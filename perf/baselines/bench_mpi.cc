// bench_mpi: the comparison loop of bench_loop.h run on MPI (Debian's OpenMPI;
// perf/compare picks the BTL, vader for shm or tcp). Start it with mpirun.
#define OMPI_SKIP_MPICXX 1  // the C API only
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <optional>

#include "perf/baselines/bench_loop.h"

namespace {

void check(int result, const char* what) {
  if (result == MPI_SUCCESS) return;
  std::fprintf(stderr, "bench_mpi: %s failed with MPI error %d\n", what, result);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

class MpiBackend {
 public:
  MpiBackend() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks_);
  }
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  bool supports(bench::Collective) const { return true; }
  void prepare(bench::Collective, size_t, float*, float*) {}

  void run(bench::Collective c, size_t count, float* send, float* recv) {
    using bench::Collective;
    int n = static_cast<int>(count);
    int result = MPI_SUCCESS;
    switch (c) {
      case Collective::kAllReduce:
        result = MPI_Allreduce(send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
      case Collective::kBroadcast:
        // MPI broadcasts in place; the root's buffer is the source.
        result = MPI_Bcast(rank_ == 0 ? send : recv, n, MPI_FLOAT, 0, MPI_COMM_WORLD);
        break;
      case Collective::kAllGather:
        result = MPI_Allgather(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, MPI_COMM_WORLD);
        break;
      case Collective::kReduceScatter:
        result = MPI_Reduce_scatter_block(send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
      case Collective::kAllToAll:
        result = MPI_Alltoall(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, MPI_COMM_WORLD);
        break;
      case Collective::kSendRecv: {
        const int right = (rank_ + 1) % nranks_, left = (rank_ + nranks_ - 1) % nranks_;
        result = MPI_Sendrecv(send, n, MPI_FLOAT, right, 0, recv, n, MPI_FLOAT, left, 0,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
      }
    }
    check(result, bench::collectiveName(c));
  }

  void barrier() { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

  void maxOverRanks(double* values, size_t n) {
    check(MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(n), MPI_DOUBLE, MPI_MAX,
                        MPI_COMM_WORLD),
          "MPI_Allreduce(max)");
  }

 private:
  int rank_ = 0;
  int nranks_ = 1;
};

}  // namespace

int main(int argc, char** argv) {
  // The command line first, so that --help and a bad argument answer without starting MPI.
  bench::Options options;
  if (std::optional<int> exit = bench::parseOptions(argc, argv, "bench_mpi", &options)) {
    return *exit;
  }
  MPI_Init(&argc, &argv);
  // The backend must be gone before MPI_Finalize: runParsed scopes it.
  int status = bench::runParsed<MpiBackend>(options, "mpi", "BENCH_TRANSPORT", "default");
  MPI_Finalize();
  return status;
}
