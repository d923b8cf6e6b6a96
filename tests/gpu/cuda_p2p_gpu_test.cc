// The cuda_p2p transport end to end through the C API: ranks in separate processes (forked,
// joined with braidCommInitRank) run all-reduce, reduce-scatter, all-gather, broadcast and
// all-to-all on CUDA device buffers, in and out of place, several types and ops, sizes on
// both protocols (LL and Simple with two channels); each rank checks its own output against
// the float64 reference (inputs are a pure function of rank and index, so no rank needs
// another's memory). Exits 0 when every rank saw only right answers, 77 (skipped) when no
// rank has a CUDA device, 1 otherwise.
//
//   cuda_p2p_gpu_test [--ranks N] [--threads] [--same-device] [--quick]
//
// Ranks use device rank % deviceCount (two GPUs: a real peer link), or device 0 with
// --same-device (CUDA IPC within one GPU). --threads runs the ranks as threads of this
// process instead (the group then shares pointers instead of opening IPC handles).
// --quick: small sizes only.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "braid.h"
#include "forked_gpu_ranks.h"
#include "support/device_rank_case.h"

using braid::coll::CollArgs;
using braid::coll::CollKind;
namespace bt = braid::testing;

namespace {

using bt::kSkipped;
constexpr double kDeadlineSeconds = 550;  // below the ctest TIMEOUT: we report, not ctest

struct Options {
  int ranks = 2;
  bool threads = false;
  bool sameDevice = false;
  bool quick = false;
};

braidResult_t call(const CollArgs& a, const void* send, void* recv, braidComm_t comm,
                   cudaStream_t stream) {
  switch (a.kind) {
    case CollKind::kAllReduce:
      return braidAllReduce(send, recv, a.count, a.type, a.op, comm, stream);
    case CollKind::kReduceScatter:
      return braidReduceScatter(send, recv, a.count, a.type, a.op, comm, stream);
    case CollKind::kAllGather:
      return braidAllGather(send, recv, a.count, a.type, comm, stream);
    case CollKind::kBroadcast:
      return braidBroadcast(send, recv, a.count, a.type, a.root, comm, stream);
    case CollKind::kAllToAll:
      return braidAllToAll(send, recv, a.count, a.type, comm, stream);
    default:
      return braidInvalidArgument;
  }
}

// One case on this rank: device buffers, the call, the download and the check. "" if right.
std::string runCase(const CollArgs& a, uint64_t seed, braidComm_t comm, cudaStream_t stream) {
  const bt::RankBufferLayout l = bt::rankBufferLayout(a);
  const bt::InputPattern pattern = bt::patternFor(a, seed);
  std::vector<uint8_t> input(l.sendBytes + 1), output(l.recvBytes + 1);
  bt::fillRankInput(a, pattern, input.data());
  uint8_t *whole = nullptr, *send = nullptr, *recv = nullptr;
  auto alloc = [](uint8_t** p, size_t bytes) {
    return cudaMalloc(reinterpret_cast<void**>(p), bytes + 16) == cudaSuccess &&
           cudaMemset(*p, 0xee, bytes + 16) == cudaSuccess;
  };
  std::string failure;
  bool ok = a.inPlace ? alloc(&whole, l.wholeBytes)
                      : alloc(&send, l.sendBytes) && alloc(&recv, l.recvBytes);
  if (a.inPlace && ok) {
    send = whole + l.sendOffset;
    recv = whole + l.recvOffset;
  }
  ok = ok && cudaMemcpy(send, input.data(), l.sendBytes, cudaMemcpyHostToDevice) == cudaSuccess;
  if (!ok) failure = std::string("CUDA setup: ") + cudaGetErrorString(cudaGetLastError());
  if (ok) {
    const braidResult_t r = call(a, send, recv, comm, stream);
    if (r != braidSuccess) {
      failure =
          std::string("call returned ") + braidGetErrorString(r) + ": " + braidGetLastError(comm);
    } else if (cudaStreamSynchronize(stream) != cudaSuccess ||
               cudaMemcpy(output.data(), recv, l.recvBytes, cudaMemcpyDeviceToHost) !=
                   cudaSuccess) {
      failure = std::string("CUDA after the call: ") + cudaGetErrorString(cudaGetLastError());
    } else {
      failure = bt::checkRankOutput(a, pattern, output.data());
    }
  }
  cudaFree(whole);
  if (!a.inPlace) {
    cudaFree(send);
    cudaFree(recv);
  }
  return failure;
}

std::vector<CollArgs> cases(int nranks, bool quick) {
  std::vector<CollArgs> all;
  for (CollKind kind : {CollKind::kAllReduce, CollKind::kReduceScatter, CollKind::kAllGather,
                        CollKind::kBroadcast, CollKind::kAllToAll}) {
    const bool reduces = kind == CollKind::kAllReduce || kind == CollKind::kReduceScatter;
    for (braidDataType_t type :
         {braidFloat32, braidBfloat16, braidFloat16, braidInt32, braidUint8, braidFloat64}) {
      for (braidRedOp_t op : {braidSum, braidMax, braidAvg}) {
        if (!reduces && op != braidSum) continue;
        // 4097 elements run LL, 2^20 + 3 Simple on two channels (ipc_group.h options).
        for (size_t count : {size_t(0), size_t(1), size_t(4097), (size_t(1) << 20) + 3}) {
          const bool large = count > 4097;
          if (large && (quick || op != braidSum ||
                        !(type == braidFloat32 || type == braidBfloat16 || type == braidUint8))) {
            continue;
          }
          for (bool inPlace : {false, true}) {
            CollArgs a;
            a.kind = kind;
            a.type = type;
            a.op = op;
            a.count = count;
            a.nranks = nranks;
            a.root = nranks - 1;
            a.inPlace = inPlace;
            all.push_back(a);
          }
        }
      }
    }
  }
  return all;
}

// A rank's whole run; 0 when every case was right, kSkipped without a device.
int runRank(int rank, const Options& o, const braidUniqueId& id) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return kSkipped;
  const int device = o.sameDevice ? 0 : rank % devices;
  if (cudaSetDevice(device) != cudaSuccess) return 1;
  braidComm_t comm = nullptr;
  if (braidCommInitRank(&comm, o.ranks, id, rank) != braidSuccess) {
    std::fprintf(stderr, "rank %d: init failed: %s\n", rank, braidGetLastError(nullptr));
    return 1;
  }
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  int failures = 0, run = 0;
  uint64_t seed = 1000;
  for (CollArgs a : cases(o.ranks, o.quick)) {
    a.rank = rank;
    const std::string failure = runCase(a, seed++, comm, stream);
    ++run;
    if (failure.empty()) continue;
    if (++failures <= 10) {
      std::fprintf(stderr, "rank %d (device %d): FAILED %s: %s\n", rank, device,
                   bt::describeCall(a).c_str(), failure.c_str());
    }
    if (failure.rfind("call returned", 0) == 0) break;  // the communicator may be unusable
  }
  std::fprintf(stderr, "rank %d (device %d): %d of %d cases failed\n", rank, device, failures, run);
  cudaStreamDestroy(stream);
  braidCommDestroy(comm);
  return failures == 0 ? 0 : 1;
}

int runThreads(const Options& o) {
  braidUniqueId id;
  if (braidGetUniqueId(&id) != braidSuccess) return 1;
  std::vector<int> codes(size_t(o.ranks), 1);
  std::vector<std::thread> threads;
  for (int r = 0; r < o.ranks; ++r) {
    threads.emplace_back([&, r] { codes[size_t(r)] = runRank(r, o, id); });
  }
  for (auto& t : threads) t.join();
  return bt::gpuVerdict("cuda_p2p", codes);
}

int runProcesses(const Options& o) {
  return bt::runForkedGpuRanks(
      "cuda_p2p", o.ranks, kDeadlineSeconds,
      [&](int rank, const braidUniqueId& id) { return runRank(rank, o, id); });
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads") {
      o.threads = true;
    } else if (arg == "--same-device") {
      o.sameDevice = true;
    } else if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "--ranks" && i + 1 < argc) {
      o.ranks = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--ranks N] [--threads] [--same-device] [--quick]\n",
                   argv[0]);
      return 2;
    }
  }
  if (o.ranks < 1) return 2;
  return o.threads ? runThreads(o) : runProcesses(o);
}
