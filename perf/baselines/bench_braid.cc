// bench_braid: the comparison loop of bench_loop.h run on braid. Start it with
// tools/braidrun (BRAID_TRANSPORT=shm|socket picks the transport).
#include <cstdio>
#include <cstdlib>

#include "braid.h"
#include "perf/baselines/bench_loop.h"

namespace {

void check(braidResult_t result, braidComm_t comm, const char* what) {
  if (result == braidSuccess) return;
  const char* detail = comm ? braidGetLastError(comm) : "";
  std::fprintf(stderr, "bench_braid: %s failed: %s %s\n", what, braidGetErrorString(result),
               detail ? detail : "");
  std::exit(1);
}

class BraidBackend {
 public:
  BraidBackend() {
    check(braidCommInitFromEnv(&comm_), nullptr, "braidCommInitFromEnv");
    check(braidCommUserRank(comm_, &rank_), comm_, "braidCommUserRank");
    check(braidCommCount(comm_, &nranks_), comm_, "braidCommCount");
  }
  ~BraidBackend() { braidCommDestroy(comm_); }

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  bool supports(bench::Collective) const { return true; }
  void prepare(bench::Collective, size_t, float*, float*) {}

  void run(bench::Collective c, size_t count, float* send, float* recv) {
    using bench::Collective;
    braidResult_t result = braidSuccess;
    switch (c) {
      case Collective::kAllReduce:
        result = braidAllReduce(send, recv, count, braidFloat32, braidSum, comm_, nullptr);
        break;
      case Collective::kBroadcast: {
        // In place, as MPI_Bcast is (one buffer: the root's is the source).
        // Out of place the root would also copy its whole buffer locally,
        // work OpenMPI's call never does.
        float* buffer = rank_ == 0 ? send : recv;
        result = braidBroadcast(buffer, buffer, count, braidFloat32, 0, comm_, nullptr);
        break;
      }
      case Collective::kAllGather:
        result = braidAllGather(send, recv, count, braidFloat32, comm_, nullptr);
        break;
      case Collective::kReduceScatter:
        result = braidReduceScatter(send, recv, count, braidFloat32, braidSum, comm_, nullptr);
        break;
      case Collective::kAllToAll:
        result = braidAllToAll(send, recv, count, braidFloat32, comm_, nullptr);
        break;
      case Collective::kSendRecv: {
        // A ring shift in one group, as nccl-tests' sendrecv does.
        const int right = (rank_ + 1) % nranks_, left = (rank_ + nranks_ - 1) % nranks_;
        result = braidGroupStart();
        braidResult_t sent = braidSend(send, count, braidFloat32, right, comm_, nullptr);
        braidResult_t received = braidRecv(recv, count, braidFloat32, left, comm_, nullptr);
        braidResult_t ended = braidGroupEnd();
        for (braidResult_t r : {sent, received, ended})
          result = result == braidSuccess ? r : result;
        break;
      }
    }
    check(result, comm_, bench::collectiveName(c));
  }

  void barrier() { check(braidBarrier(comm_, nullptr), comm_, "braidBarrier"); }

  void maxOverRanks(double* values, size_t n) {
    check(braidAllReduce(values, values, n, braidFloat64, braidMax, comm_, nullptr), comm_,
          "braidAllReduce(max)");
  }

 private:
  braidComm_t comm_ = nullptr;
  int rank_ = 0;
  int nranks_ = 1;
};

}  // namespace

int main(int argc, char** argv) {
  return bench::runMain<BraidBackend>(argc, argv, "braid", "BRAID_TRANSPORT", "default");
}
