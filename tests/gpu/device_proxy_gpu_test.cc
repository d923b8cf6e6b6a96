// Device buffers through the host proxy on a real GPU (src/comm/device_proxy/): 2 ranks in
// 2 processes sharing GPU 0, joined over shm or socket (braidCommInitRank, no device
// group), each with its own cudaStreamNonBlocking stream. Every call of the sweep is
// queued before the one stream synchronisation, so calls pipeline through the proxy; the
// answers are downloaded and checked against the float64 reference (tests/support).
//
//   device_proxy_gpu_test <shm|socket>
//
// Exit 0: every rank correct; 77: no CUDA device (skipped); 1: a wrong answer or error.
// BRAID_PROXY_STREAM_WAIT=kernel runs the spin-kernel stream wait instead of
// cuStreamWaitValue32 (ctest runs both).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "braid.h"
#include "cuda_device.h"
#include "forked_gpu_ranks.h"
#include "support/element_bits.h"
#include "support/input_pattern.h"
#include "support/reference.h"

using namespace braid::testing;

namespace {

constexpr int kRanks = 2;
constexpr double kDeadlineSeconds = 280;

enum class Kind { kAllReduce, kReduceScatter, kAllGather, kBroadcast };

struct Case {
  Kind kind;
  braidDataType_t type;
  braidRedOp_t op;
  size_t count;  // per-rank block for reduce-scatter and all-gather
  bool inPlace;
};

std::vector<Case> sweep() {
  std::vector<Case> cases;
  const size_t counts[] = {0, 1, 4097, (size_t{1} << 20) + 3};
  const braidDataType_t reduced[] = {braidFloat32, braidFloat16, braidBfloat16,
                                     braidInt32,   braidUint8,   braidFloat64};
  for (size_t count : counts) {
    for (bool inPlace : {false, true}) {
      for (braidDataType_t type : reduced) {
        cases.push_back({Kind::kAllReduce, type, braidSum, count, inPlace});
      }
      cases.push_back({Kind::kAllReduce, braidFloat32, braidMax, count, inPlace});
      cases.push_back({Kind::kReduceScatter, braidFloat32, braidSum, count, inPlace});
      cases.push_back({Kind::kAllGather, braidInt32, braidSum, count, inPlace});
      cases.push_back({Kind::kBroadcast, braidFloat64, braidSum, count, inPlace});
    }
  }
  return cases;
}

const char* kindName(Kind k) {
  switch (k) {
    case Kind::kAllReduce:
      return "allreduce";
    case Kind::kReduceScatter:
      return "reducescatter";
    case Kind::kAllGather:
      return "allgather";
    default:
      return "broadcast";
  }
}

// One call's buffers: `send`/`recv` point into the device allocation as the API wants them.
struct Call {
  Case c;
  InputPattern pattern;
  void* device = nullptr;
  size_t deviceBytes = 0;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t recvOffset = 0;  // bytes from `device` to `recv`
  size_t recvBytes = 0;
};

constexpr int kRoot = 1;

bool prepare(Call& call, int rank) {
  const Case& c = call.c;
  const size_t es = elementBytes(c.type);
  const size_t block = c.count * es;
  const size_t sendBytes = c.kind == Kind::kReduceScatter ? block * kRanks : block;
  call.recvBytes = c.kind == Kind::kAllGather ? block * kRanks : block;
  call.deviceBytes = c.inPlace ? std::max(sendBytes, call.recvBytes) : sendBytes + call.recvBytes;
  if (cudaMalloc(&call.device, std::max<size_t>(call.deviceBytes, 1)) != cudaSuccess) return false;
  auto* base = static_cast<uint8_t*>(call.device);
  std::vector<uint8_t> host(call.deviceBytes, 0xA5);  // poison where the answer goes
  size_t sendOffset = 0;
  if (!c.inPlace) {
    call.recvOffset = sendBytes;
  } else if (c.kind == Kind::kAllGather) {
    sendOffset = rank * block;  // in place: this rank's block of the output
  } else if (c.kind == Kind::kReduceScatter) {
    call.recvOffset = rank * block;
  }
  const int source = c.kind == Kind::kBroadcast ? kRoot : rank;
  if (c.kind != Kind::kBroadcast || rank == kRoot) {
    call.pattern.fill(source, 0, sendBytes / es, host.data() + sendOffset);
  }
  call.send = base + sendOffset;
  call.recv = base + call.recvOffset;
  return cudaMemcpy(call.device, host.data(), call.deviceBytes, cudaMemcpyHostToDevice) ==
         cudaSuccess;
}

braidResult_t enqueue(const Call& call, braidComm_t comm, cudaStream_t stream) {
  const Case& c = call.c;
  switch (c.kind) {
    case Kind::kAllReduce:
      return braidAllReduce(call.send, call.recv, c.count, c.type, c.op, comm, stream);
    case Kind::kReduceScatter:
      return braidReduceScatter(call.send, call.recv, c.count, c.type, c.op, comm, stream);
    case Kind::kAllGather:
      return braidAllGather(call.send, call.recv, c.count, c.type, comm, stream);
    default:
      return braidBroadcast(call.send, call.recv, c.count, c.type, kRoot, comm, stream);
  }
}

std::string check(const Call& call, int rank) {
  const Case& c = call.c;
  std::vector<uint8_t> got(call.recvBytes);
  if (call.recvBytes > 0 &&
      cudaMemcpy(got.data(), call.recv, call.recvBytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
    return "download failed";
  }
  const ElementSource source = sourceFromPattern(call.pattern);
  switch (c.kind) {
    case Kind::kAllReduce:
      return checkReduced(c.type, c.op, kRanks, got.data(), c.count, source, 0);
    case Kind::kReduceScatter:
      return checkReduced(c.type, c.op, kRanks, got.data(), c.count, source, rank * c.count);
    case Kind::kAllGather: {
      std::string all;
      for (int r = 0; r < kRanks; ++r) {
        all += checkCopied(c.type, got.data() + r * c.count * elementBytes(c.type), c.count, source,
                           r, 0);
      }
      return all;
    }
    default:
      return checkCopied(c.type, got.data(), c.count, source, kRoot, 0);
  }
}

int runRank(int rank, const braidUniqueId& id) {
  if (!haveCudaDevice()) return kSkipped;
  cudaSetDevice(0);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  braidComm_t comm = nullptr;
  if (braidCommInitRank(&comm, kRanks, id, rank) != braidSuccess) {
    std::fprintf(stderr, "rank %d: init failed\n", rank);
    return 1;
  }
  std::vector<Call> calls;
  uint64_t seed = 1;
  for (const Case& c : sweep()) {
    calls.push_back(Call{c, c.kind == Kind::kAllReduce || c.kind == Kind::kReduceScatter
                                ? InputPattern(c.type, c.op, seed++)
                                : InputPattern::forMove(c.type, seed++)});
    if (!prepare(calls.back(), rank)) {
      std::fprintf(stderr, "rank %d: cudaMalloc/cudaMemcpy failed\n", rank);
      return 1;
    }
  }
  int failures = 0;
  for (const Call& call : calls) {  // all queued, one synchronisation
    if (braidResult_t r = enqueue(call, comm, stream); r != braidSuccess) {
      std::fprintf(stderr, "rank %d: %s: %s\n", rank, kindName(call.c.kind),
                   braidGetLastError(comm));
      ++failures;
    }
  }
  if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess) {
    std::fprintf(stderr, "rank %d: stream: %s\n", rank, cudaGetErrorString(e));
    return 1;
  }
  for (const Call& call : calls) {
    const std::string wrong = check(call, rank);
    if (wrong.empty()) continue;
    ++failures;
    std::fprintf(stderr, "rank %d: %s %s %s count %zu%s: %s\n", rank, kindName(call.c.kind),
                 typeLabel(call.c.type), opLabel(call.c.op), call.c.count,
                 call.c.inPlace ? " in place" : "", wrong.c_str());
  }
  braidResult_t async = braidSuccess;
  braidCommGetAsyncError(comm, &async);
  if (async != braidSuccess) {
    std::fprintf(stderr, "rank %d: async error %d\n", rank, int(async));
    ++failures;
  }
  braidCommDestroy(comm);
  for (Call& call : calls) cudaFree(call.device);
  cudaStreamDestroy(stream);
  std::printf("rank %d: %zu calls, %d wrong\n", rank, calls.size(), failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "shm") != 0 && std::strcmp(argv[1], "socket") != 0)) {
    std::fprintf(stderr, "usage: %s <shm|socket>\n", argv[0]);
    return 2;
  }
  setenv("BRAID_TRANSPORT", argv[1], 1);
  return runForkedGpuRanks("device_proxy", kRanks, kDeadlineSeconds,
                           [&](int rank, const braidUniqueId& id) { return runRank(rank, id); });
}
