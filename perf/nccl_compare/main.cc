// braid-nccl-compare: braid and NCCL side by side on one GPU, in the same process layout and
// the same measurement loop, so their ratio means something.
//
//   braid-nccl-compare [--query] [--nccl PATH] [--ranks N] [--min BYTES] [--max BYTES]
//                      [--factor F] [--rounds R] [--json FILE]
//
// Layout: N ranks (default 2) as threads of this process, all on GPU 0, one non-blocking
// stream each. braid: braidCommInitAll with the device repeated. NCCL: libnccl.so.2 (the one
// PyTorch carries: --nccl, else the loader's search) opened with dlopen, one ncclCommInitRank
// per thread; NCCL_MULTI_RANK_GPU_ENABLE=1 (set here unless given) lets NCCL >= 2.30 put
// several ranks on one GPU. Loop, per collective (all-reduce, all-gather, reduce-scatter;
// float32 sum) and size: for each of R rounds, braid then NCCL: barrier, warm-up calls,
// synchronise, barrier, time `iters` calls and one synchronise; the call's time is the slowest
// rank's; the median round is reported. Sizes as nccl-tests: all-reduce the buffer, all-gather
// the whole output, reduce-scatter the whole input. Before timing, each library's result of
// each collective is checked once (inputs rank + 1).
//
// Exit: 0 both ran and were right; 1 braid failed or was wrong; 3 NCCL could not run here
// (why is printed and in the JSON; braid's times are still reported); 77 no CUDA device.
// A watchdog ends the program (exit 4, JSON written) if anything hangs past --deadline.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "braid.h"
#include "nccl_library.h"
#include "options.h"
#include "result_log.h"

namespace braid::perf {
namespace {

constexpr int kDevice = 0;
constexpr int kSkipped = 77;

enum class Lib { kBraid, kNccl };

// Per-rank state: communicators, stream and buffers of the largest size.
struct Rank {
  braidComm_t braid = nullptr;
  ncclComm_t nccl = nullptr;
  cudaStream_t stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
};

// The elements each rank passes as `count` for a collective of `bytes` (nccl-tests sizes).
size_t countFor(Collective c, size_t bytes, int n) {
  const size_t elems = bytes / sizeof(float);
  return c == Collective::kAllReduce ? elems : elems / size_t(n);
}

// One collective call; "" when it was enqueued.
std::string call(Lib lib, Collective c, const NcclLibrary& nccl, Rank& r, size_t count) {
  if (lib == Lib::kBraid) {
    braidResult_t rc = braidSuccess;
    if (c == Collective::kAllReduce) {
      rc = braidAllReduce(r.send, r.recv, count, braidFloat32, braidSum, r.braid, r.stream);
    } else if (c == Collective::kAllGather) {
      rc = braidAllGather(r.send, r.recv, count, braidFloat32, r.braid, r.stream);
    } else {
      rc = braidReduceScatter(r.send, r.recv, count, braidFloat32, braidSum, r.braid, r.stream);
    }
    return rc == braidSuccess ? "" : std::string("braid: ") + braidGetLastError(r.braid);
  }
  ncclResult_t rc = ncclSuccess;
  if (c == Collective::kAllReduce) {
    rc = nccl.allReduce(r.send, r.recv, count, ncclFloat32, ncclSum, r.nccl, r.stream);
  } else if (c == Collective::kAllGather) {
    rc = nccl.allGather(r.send, r.recv, count, ncclFloat32, r.nccl, r.stream);
  } else {
    rc = nccl.reduceScatter(r.send, r.recv, count, ncclFloat32, ncclSum, r.nccl, r.stream);
  }
  return rc == ncclSuccess ? "" : std::string("NCCL: ") + nccl.getErrorString(rc);
}

std::string cudaError(cudaError_t e, const char* what) {
  return e == cudaSuccess ? "" : std::string(what) + ": " + cudaGetErrorString(e);
}

// What rank `r` must hold after a collective whose inputs were rank + 1 on every rank.
std::string checkResult(Collective c, const std::vector<float>& got, int rank, int n) {
  const float sum = float(n) * float(n + 1) / 2;
  for (size_t i = 0; i < got.size(); ++i) {
    float want = sum;
    if (c == Collective::kAllGather) want = float(i / (got.size() / size_t(n)) + 1);
    if (got[i] != want) {
      return "rank " + std::to_string(rank) + " element " + std::to_string(i) + ": got " +
             std::to_string(got[i]) + ", want " + std::to_string(want);
    }
  }
  (void)rank;
  return "";
}

class Comparison {
 public:
  Comparison(const Options& o, const NcclLibrary& nccl, bool ncclUsable, ResultLog* log)
      : o_(o),
        nccl_(nccl),
        ncclOn_(ncclUsable),
        log_(log),
        ranks_(size_t(o.ranks)),
        barrier_(o.ranks),
        times_(size_t(o.ranks)) {}

  // Runs every rank's thread; returns the exit status.
  int run() {
    std::vector<braidComm_t> comms(size_t(o_.ranks));
    const std::vector<int> devlist(size_t(o_.ranks), kDevice);
    if (braidCommInitAll(comms.data(), o_.ranks, devlist.data()) != braidSuccess) {
      log_->fail(std::string("braidCommInitAll: ") + braidGetLastError(nullptr));
      return 1;
    }
    for (int r = 0; r < o_.ranks; ++r) ranks_[size_t(r)].braid = comms[size_t(r)];
    if (ncclOn_ && nccl_.getUniqueId(&ncclId_) != ncclSuccess) {
      disableNccl("ncclGetUniqueId failed");
    }
    std::vector<std::thread> threads;
    for (int r = 0; r < o_.ranks; ++r) threads.emplace_back([this, r] { rankMain(r); });
    for (std::thread& t : threads) t.join();
    for (Rank& r : ranks_) {
      if (r.nccl) nccl_.commDestroy(r.nccl);
      braidCommDestroy(r.braid);
      cudaFree(r.send);
      cudaFree(r.recv);
      if (r.stream) cudaStreamDestroy(r.stream);
    }
    if (failed_) return 1;
    return ncclOn_ ? 0 : 3;
  }

 private:
  void disableNccl(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (ncclOn_) log_->ncclUnavailable(why);
    ncclOn_ = false;
  }
  void fail(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_) log_->fail(why);
    failed_ = true;
  }

  void rankMain(int rank) {
    Rank& r = ranks_[size_t(rank)];
    std::string e = cudaError(cudaSetDevice(kDevice), "cudaSetDevice");
    if (e.empty())
      e = cudaError(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), "stream");
    if (e.empty()) e = cudaError(cudaMalloc(&r.send, o_.maxBytes), "cudaMalloc");
    if (e.empty()) e = cudaError(cudaMalloc(&r.recv, o_.maxBytes), "cudaMalloc");
    if (!e.empty()) fail("rank " + std::to_string(rank) + ": " + e);
    barrier_.arrive_and_wait();
    if (ncclOn_ && !failed_) {
      // Every rank calls init, so a refusal on one is seen by all (each sets the flag).
      const ncclResult_t rc = nccl_.commInitRank(&r.nccl, o_.ranks, ncclId_, rank);
      if (rc != ncclSuccess) {
        disableNccl(std::string("ncclCommInitRank with ") + std::to_string(o_.ranks) +
                    " ranks on one GPU: " + nccl_.getErrorString(rc));
      }
    }
    barrier_.arrive_and_wait();
    for (Collective c : o_.collectives) {
      for (Lib lib : {Lib::kBraid, Lib::kNccl}) verify(rank, lib, c);
    }
    for (Collective c : o_.collectives) {
      for (size_t bytes = o_.minBytes; bytes <= o_.maxBytes; bytes *= o_.factor) {
        if (countFor(c, bytes, o_.ranks) == 0) continue;
        std::vector<double> braidTimes, ncclTimes;
        for (int round = 0; round < o_.rounds; ++round) {
          braidTimes.push_back(timeCalls(rank, Lib::kBraid, c, bytes));
          ncclTimes.push_back(timeCalls(rank, Lib::kNccl, c, bytes));
        }
        if (rank == 0 && !failed_) log_->row(c, bytes, median(braidTimes), median(ncclTimes));
        if (o_.factor < 2) break;
      }
    }
  }

  bool active(Lib lib) const { return !failed_ && (lib == Lib::kBraid || ncclOn_); }

  // Inputs rank + 1, one call, the output checked on the host.
  void verify(int rank, Lib lib, Collective c) {
    barrier_.arrive_and_wait();
    if (!active(lib)) return;
    Rank& r = ranks_[size_t(rank)];
    const size_t bytes = std::min<size_t>(o_.maxBytes, size_t(1) << 20);
    const size_t count = countFor(c, bytes, o_.ranks);
    if (count == 0) return;
    const size_t sendCount = c == Collective::kReduceScatter ? count * size_t(o_.ranks) : count;
    const size_t recvCount = c == Collective::kAllGather ? count * size_t(o_.ranks) : count;
    std::vector<float> input(sendCount, float(rank + 1)), output(recvCount, -1.0f);
    std::string e = cudaError(
        cudaMemcpy(r.send, input.data(), sendCount * 4, cudaMemcpyHostToDevice), "upload");
    if (e.empty()) e = cudaError(cudaMemset(r.recv, 0xff, recvCount * 4), "cudaMemset");
    barrier_.arrive_and_wait();
    if (e.empty()) e = call(lib, c, nccl_, r, count);
    if (e.empty()) e = cudaError(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize");
    if (e.empty())
      e = cudaError(cudaMemcpy(output.data(), r.recv, recvCount * 4, cudaMemcpyDeviceToHost),
                    "download");
    if (e.empty()) e = checkResult(c, output, rank, o_.ranks);
    if (e.empty()) return;
    const std::string why = std::string(collectiveName(c)) + " check: " + e;
    if (lib == Lib::kNccl) {
      disableNccl(why);
    } else {
      fail(why);
    }
  }

  // Seconds per call (slowest rank), or 0 when the library is not running.
  double timeCalls(int rank, Lib lib, Collective c, size_t bytes) {
    barrier_.arrive_and_wait();
    if (!active(lib)) return 0;
    Rank& r = ranks_[size_t(rank)];
    const size_t count = countFor(c, bytes, o_.ranks);
    const int iters = bytes <= (size_t(1) << 20) ? 50 : bytes <= (size_t(64) << 20) ? 10 : 3;
    std::string e;
    for (int i = 0; i < 2 && e.empty(); ++i) e = call(lib, c, nccl_, r, count);
    if (e.empty()) e = cudaError(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize");
    barrier_.arrive_and_wait();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters && e.empty(); ++i) e = call(lib, c, nccl_, r, count);
    if (e.empty()) e = cudaError(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize");
    times_[size_t(rank)] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iters;
    if (!e.empty()) {
      if (lib == Lib::kNccl) {
        disableNccl(e);
      } else {
        fail(e);
      }
    }
    barrier_.arrive_and_wait();
    return *std::max_element(times_.begin(), times_.end());
  }

  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
  }

  const Options& o_;
  const NcclLibrary& nccl_;
  std::atomic<bool> ncclOn_;
  std::atomic<bool> failed_{false};
  ResultLog* log_;
  std::vector<Rank> ranks_;
  std::barrier<> barrier_;
  std::vector<double> times_;
  ncclUniqueId ncclId_{};
  std::mutex mu_;
};

int query(const NcclLibrary& nccl, const std::string& ncclError) {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, kDevice) != cudaSuccess) return 1;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf("%s, %d SMs, %.1f GiB, compute %d.%d, driver CUDA %d.%d, runtime %d.%d, NCCL %s\n",
              p.name, p.multiProcessorCount, double(p.totalGlobalMem) / (1 << 30), p.major, p.minor,
              driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10,
              ncclError.empty() ? (nccl.versionString() + " (" + nccl.path + ")").c_str()
                                : ("unavailable: " + ncclError).c_str());
  return 0;
}

}  // namespace
}  // namespace braid::perf

int main(int argc, char** argv) {
  using namespace braid::perf;
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::printf("%s", usage());
      return 0;
    }
  }
  if (const std::string error = parseOptions(argc, argv, &o); !error.empty()) {
    std::fprintf(stderr, "braid-nccl-compare: %s\n%s", error.c_str(), usage());
    return 2;
  }
  setenv("NCCL_MULTI_RANK_GPU_ENABLE", "1", 0);
  int devices = 0;
  const cudaError_t probe = cudaGetDeviceCount(&devices);
  if (probe != cudaSuccess || devices == 0) {
    std::printf("skipped: no usable CUDA device (%s)\n",
                probe != cudaSuccess ? cudaGetErrorString(probe) : "none found");
    return kSkipped;
  }
  NcclLibrary nccl;
  const std::string ncclError = loadNccl(o.ncclPath, &nccl);
  if (o.query) return query(nccl, ncclError);
  ResultLog log(o, ncclError.empty() ? nccl.versionString() : "", nccl.path);
  if (!ncclError.empty()) log.ncclUnavailable(ncclError);
  log.startWatchdog(o.deadlineSeconds);
  Comparison comparison(o, nccl, ncclError.empty(), &log);
  const int status = comparison.run();
  log.finish();
  return status;
}
