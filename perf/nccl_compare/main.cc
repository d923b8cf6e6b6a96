// braid-nccl-compare: braid and NCCL side by side on one GPU, in the same process layout and
// the same measurement loop, so their ratio means something.
//
//   braid-nccl-compare [--query] [--nccl PATH] [--ranks N] [--min BYTES] [--max BYTES]
//                      [--factor F] [--rounds R] [--json FILE] [--layout auto|threads|processes]
//
// Layout (--layout): `threads`: N ranks (default 2) as threads of this process, all on GPU 0,
// one non-blocking stream each; braid: braidCommInitAll with the device repeated. `processes`:
// one process per rank, forked before CUDA starts; braid: braidCommInitRank (cuda_p2p). NCCL:
// libnccl.so.2 (the one PyTorch carries: --nccl, else the loader's search) opened with dlopen,
// one ncclCommInitRank per rank; NCCL_MULTI_RANK_GPU_ENABLE=1 (set here unless given) lets
// NCCL >= 2.30 put several ranks on one GPU. `auto` (default): threads, and if NCCL refuses
// ranks on threads of one process, the whole comparison again as processes (both libraries
// always run in the same layout). Loop, per collective (all-reduce, all-gather, reduce-scatter;
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
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "braid.h"
#include "nccl_library.h"
#include "options.h"
#include "result_log.h"
#include "shared_state.h"

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
  // `shared` is seen by every rank (heap for threads, a shared mapping for processes).
  Comparison(const Options& o, const NcclLibrary& nccl, ResultLog* log, SharedState* shared)
      : o_(o), nccl_(nccl), log_(log), s_(*shared), ranks_(size_t(o.ranks)) {}

  // Ranks as threads of this process; returns the exit status.
  int runThreads() {
    std::vector<braidComm_t> comms(size_t(o_.ranks));
    const std::vector<int> devlist(size_t(o_.ranks), kDevice);
    if (braidCommInitAll(comms.data(), o_.ranks, devlist.data()) != braidSuccess) {
      fail(std::string("braidCommInitAll: ") + braidGetLastError(nullptr));
      return 1;
    }
    for (int r = 0; r < o_.ranks; ++r) ranks_[size_t(r)].braid = comms[size_t(r)];
    if (s_.ncclOn && nccl_.getUniqueId(&s_.ncclId) != ncclSuccess) {
      disableNccl("ncclGetUniqueId failed");
    }
    s_.idReady = true;
    std::vector<std::thread> threads;
    for (int r = 0; r < o_.ranks; ++r) threads.emplace_back([this, r] { rankMain(r); });
    for (std::thread& t : threads) t.join();
    for (Rank& r : ranks_) release(r);
    return status();
  }

  // This process is rank `rank` of a group of processes (forked before CUDA started).
  int runProcess(int rank, const braidUniqueId& id) {
    Rank& r = ranks_[size_t(rank)];
    if (braidCommInitRank(&r.braid, o_.ranks, id, rank) != braidSuccess) {
      fail("rank " + std::to_string(rank) + ": braidCommInitRank: " + braidGetLastError(nullptr));
      s_.idReady = true;  // nobody waits for an id that will not come
      return 1;
    }
    if (rank == 0) {
      // NCCL's root lives in the process that made the id: rank 0, alive to the end.
      if (s_.ncclOn && nccl_.getUniqueId(&s_.ncclId) != ncclSuccess) {
        disableNccl("ncclGetUniqueId failed");
      }
      s_.idReady = true;
    }
    while (!s_.idReady) std::this_thread::yield();
    rankMain(rank);
    release(r);
    return status();
  }

 private:
  int status() const {
    if (s_.failed) return 1;
    return s_.ncclOn ? 0 : 3;
  }
  void release(Rank& r) {
    if (r.nccl) nccl_.commDestroy(r.nccl);
    if (r.braid) braidCommDestroy(r.braid);
    cudaFree(r.send);
    cudaFree(r.recv);
    if (r.stream) cudaStreamDestroy(r.stream);
  }
  void disableNccl(const std::string& why) {
    if (s_.setNcclError(why)) log_->ncclUnavailable(why);
    s_.ncclOn = false;
  }
  void fail(const std::string& why) {
    if (s_.setBraidError(why)) log_->fail(why);
    s_.failed = true;
  }

  void rankMain(int rank) {
    Rank& r = ranks_[size_t(rank)];
    std::string e = cudaError(cudaSetDevice(kDevice), "cudaSetDevice");
    if (e.empty())
      e = cudaError(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), "stream");
    if (e.empty()) e = cudaError(cudaMalloc(&r.send, o_.maxBytes), "cudaMalloc");
    if (e.empty()) e = cudaError(cudaMalloc(&r.recv, o_.maxBytes), "cudaMalloc");
    if (!e.empty()) fail("rank " + std::to_string(rank) + ": " + e);
    s_.arriveAndWait(o_.ranks);
    if (s_.ncclOn && !s_.failed) {
      // Every rank calls init, so a refusal on one is seen by all (each sets the flag).
      const ncclResult_t rc = nccl_.commInitRank(&r.nccl, o_.ranks, s_.ncclId, rank);
      if (rc != ncclSuccess) {
        s_.ncclInitRefused = true;
        disableNccl(std::string("ncclCommInitRank with ") + std::to_string(o_.ranks) +
                    " ranks on one GPU: " + nccl_.getErrorString(rc));
      }
    }
    s_.arriveAndWait(o_.ranks);
    // --layout auto retries in processes: no braid-only sweep in a layout NCCL refused.
    if (o_.layout == Layout::kAuto && s_.ncclInitRefused) return;
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
        if (rank == 0 && !s_.failed) log_->row(c, bytes, median(braidTimes), median(ncclTimes));
        if (o_.factor < 2) break;
      }
    }
  }

  bool active(Lib lib) const { return !s_.failed && (lib == Lib::kBraid || s_.ncclOn); }

  // Inputs rank + 1, one call, the output checked on the host.
  void verify(int rank, Lib lib, Collective c) {
    s_.arriveAndWait(o_.ranks);
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
    s_.arriveAndWait(o_.ranks);
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
    s_.arriveAndWait(o_.ranks);
    if (!active(lib)) return 0;
    Rank& r = ranks_[size_t(rank)];
    const size_t count = countFor(c, bytes, o_.ranks);
    const int iters = bytes <= (size_t(1) << 20) ? 50 : bytes <= (size_t(64) << 20) ? 10 : 3;
    std::string e;
    for (int i = 0; i < 2 && e.empty(); ++i) e = call(lib, c, nccl_, r, count);
    if (e.empty()) e = cudaError(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize");
    s_.arriveAndWait(o_.ranks);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters && e.empty(); ++i) e = call(lib, c, nccl_, r, count);
    if (e.empty()) e = cudaError(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize");
    s_.times[rank] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iters;
    if (!e.empty()) {
      if (lib == Lib::kNccl) {
        disableNccl(e);
      } else {
        fail(e);
      }
    }
    s_.arriveAndWait(o_.ranks);
    return *std::max_element(s_.times, s_.times + o_.ranks);
  }

  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
  }

  const Options& o_;
  const NcclLibrary& nccl_;
  ResultLog* log_;
  SharedState& s_;
  std::vector<Rank> ranks_;  // processes: only this process's entry is used
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

// No usable device: the message and exit status of every mode.
int noDevice(cudaError_t probe) {
  std::printf("skipped: no usable CUDA device (%s)\n",
              probe != cudaSuccess ? cudaGetErrorString(probe) : "none found");
  return kSkipped;
}

// Ranks as threads of this process. Returns the exit status; *initRefused tells whether NCCL
// refused this layout at init (the case --layout auto retries as processes).
int runThreads(const Options& o, bool* initRefused) {
  NcclLibrary nccl;
  const std::string ncclError = loadNccl(o.ncclPath, &nccl);
  ResultLog log(o, ncclError.empty() ? nccl.versionString() : "", nccl.path, "threads");
  auto shared = std::make_unique<SharedState>();
  if (!ncclError.empty()) {
    shared->ncclOn = false;
    log.ncclUnavailable(ncclError);
  }
  log.startWatchdog(o.deadlineSeconds);
  Comparison comparison(o, nccl, &log, shared.get());
  const int status = comparison.runThreads();
  *initRefused = shared->ncclInitRefused;
  log.finish();
  return status;
}

// One process per rank, forked before anything touches CUDA; rank 0 prints and writes the
// JSON. The parent waits (killing ranks still running after the deadline) and returns the
// worst rank's status.
int runProcesses(const Options& o) {
  braidUniqueId id;
  if (braidGetUniqueId(&id) != braidSuccess) {
    std::fprintf(stderr, "braid-nccl-compare: braidGetUniqueId: %s\n", braidGetLastError(nullptr));
    return 1;
  }
  void* page =
      mmap(nullptr, sizeof(SharedState), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    std::perror("braid-nccl-compare: mmap");
    return 1;
  }
  SharedState* shared = new (page) SharedState();
  std::fflush(nullptr);
  std::vector<pid_t> pids;
  for (int rank = 0; rank < o.ranks; ++rank) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::perror("braid-nccl-compare: fork");
      for (pid_t p : pids) kill(p, SIGKILL);
      return 1;
    }
    if (pid == 0) {
      int devices = 0;
      const cudaError_t probe = cudaGetDeviceCount(&devices);
      if (probe != cudaSuccess || devices == 0) {
        const int code = noDevice(probe);
        std::fflush(nullptr);
        _exit(code);
      }
      NcclLibrary nccl;
      const std::string ncclError = loadNccl(o.ncclPath, &nccl);
      Options mine = o;
      if (rank != 0) mine.jsonPath.clear();
      ResultLog log(mine, ncclError.empty() ? nccl.versionString() : "", nccl.path, "processes",
                    /*quiet=*/rank != 0);
      if (!ncclError.empty()) {
        shared->ncclOn = false;
        if (shared->setNcclError(ncclError)) log.ncclUnavailable(ncclError);
      }
      log.startWatchdog(o.deadlineSeconds);
      Comparison comparison(o, nccl, &log, shared);
      const int status = comparison.runProcess(rank, id);
      if (shared->ncclError[0] != '\0') log.ncclUnavailable(shared->ncclError);
      if (shared->braidError[0] != '\0') log.fail(shared->braidError);
      log.finish();
      std::fflush(nullptr);
      _exit(status);
    }
    pids.push_back(pid);
  }
  int worst = 0;
  int skipped = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(o.deadlineSeconds + 10);
  for (pid_t pid : pids) {
    int wstatus = 0;
    for (;;) {
      const pid_t done = waitpid(pid, &wstatus, WNOHANG);
      if (done == pid) break;
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &wstatus, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const int code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 4;
    skipped += code == kSkipped ? 1 : 0;
    if (code != kSkipped) worst = std::max(worst, code);
  }
  if (skipped == int(pids.size())) return kSkipped;
  return skipped > 0 ? std::max(worst, 1) : worst;  // some ranks saw no device: a failure
}

}  // namespace
}  // namespace braid::perf

int main(int argc, char** argv) {
  using namespace braid::perf;
  Options o;
  if (std::optional<int> exit = parseOptions(argc, argv, &o)) return *exit;
  setenv("NCCL_MULTI_RANK_GPU_ENABLE", "1", 0);
  // Processes must fork before this process touches CUDA.
  if (o.layout == Layout::kProcesses) return runProcesses(o);
  int devices = 0;
  const cudaError_t probe = cudaGetDeviceCount(&devices);
  if (probe != cudaSuccess || devices == 0) return noDevice(probe);
  if (o.query) {
    NcclLibrary nccl;
    const std::string ncclError = loadNccl(o.ncclPath, &nccl);
    return query(nccl, ncclError);
  }
  bool initRefused = false;
  const int status = runThreads(o, &initRefused);
  if (o.layout != Layout::kAuto || !initRefused) return status;
  // NCCL refused ranks on threads of one process: the whole comparison again, one process per
  // rank, from a fresh image (CUDA is already started here, and a fork would not carry it).
  std::printf("# NCCL refused ranks on threads of one process; again with one process per rank\n");
  std::fflush(nullptr);
  std::vector<char*> args(argv, argv + argc);
  std::string layoutFlag = "--layout", processes = "processes";
  args.push_back(layoutFlag.data());
  args.push_back(processes.data());
  args.push_back(nullptr);
  execv("/proc/self/exe", args.data());
  std::perror("braid-nccl-compare: execv");
  return status;
}
