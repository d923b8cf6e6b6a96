// Send/recv, groups and all-to-all-v on device buffers through the host proxy on a real GPU
// (src/comm/device_proxy/), mirroring tests/unit/device_proxy_p2p_test.cc: 2 ranks in 2
// processes sharing GPU 0, joined over shm or socket (BRAID_P2P_DISABLE=1 from ctest: no
// cuda_p2p group), two cudaStreamNonBlocking streams each.
//
//   device_proxy_p2p_gpu_test <shm|socket> [--mismatch|--capture]
//
// Data: one group with the exchange on both streams, an all-reduce and zero-count messages;
// a second group sending what the first received; a single send meeting a single receive;
// all-to-all-v (zero counts, gaps that must stay untouched) out of place and in place; all
// queued before the streams are synchronised, int32 values checked exactly. --mismatch:
// rank 1 receives fewer elements than rank 0 sends, and both ranks must get their streams
// back with an asynchronous error. --capture: CUDA graph capture and five replays
// (runCapture below).
//
// Exit 0: correct; 77: no CUDA device (skipped); 1: a wrong answer or error.
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
#include "support/alltoallv_layout.h"

using namespace braid::testing;

namespace {

constexpr int kRanks = 2;
constexpr double kDeadlineSeconds = 280;
constexpr int32_t kPoison = -7;
constexpr size_t kCount = (size_t{1} << 20) + 3;  // several proxy pieces' worth, odd

int32_t value(int rank, size_t i, int salt) {
  return static_cast<int32_t>(uint32_t(rank) * 1000003u + uint32_t(i) * 7u + uint32_t(salt));
}

// A device buffer with its host image (what it holds, then what it must hold).
struct Buffer {
  std::vector<int32_t> host;
  int32_t* device = nullptr;
  explicit Buffer(size_t count, int32_t fill = kPoison) : host(count, fill) {}
  bool upload() {
    if (cudaMalloc(&device, std::max<size_t>(host.size(), 1) * 4) != cudaSuccess) return false;
    return cudaMemcpy(device, host.data(), host.size() * 4, cudaMemcpyHostToDevice) == cudaSuccess;
  }
  // "" or the first difference from `want`.
  std::string check(const std::vector<int32_t>& want, const char* what) {
    std::vector<int32_t> got(host.size());
    if (cudaMemcpy(got.data(), device, got.size() * 4, cudaMemcpyDeviceToHost) != cudaSuccess) {
      return std::string(what) + ": download failed";
    }
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != want[i]) {
        return std::string(what) + ": element " + std::to_string(i) + " is " +
               std::to_string(got[i]) + ", want " + std::to_string(want[i]);
      }
    }
    return "";
  }
  ~Buffer() { cudaFree(device); }
};

using Layout = AllToAllvLayout;  // support/alltoallv_layout.h

// The unit test's layouts with blocks 100 times larger: several proxy pieces each.
Layout layoutOf(int self, bool sending, bool symmetric) {
  return allToAllvLayout(self, kRanks, sending, symmetric, /*scale=*/100);
}

// Rank `from`'s blocks for every peer (salt) in `layout`, poison in the gaps.
std::vector<int32_t> alltoallvImage(const Layout& layout, int self, bool sending, int salt) {
  std::vector<int32_t> image(layout.total, kPoison);
  for (int peer = 0; peer < kRanks; ++peer) {
    const int from = sending ? self : peer, to = sending ? peer : self;
    for (size_t k = 0; k < layout.counts[peer]; ++k) {
      image[layout.displs[peer] + k] = value(from, size_t(to) * 1000000 + k, salt);
    }
  }
  return image;
}

std::vector<int32_t> pattern(int rank, size_t count, int salt) {
  std::vector<int32_t> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = value(rank, i, salt);
  return v;
}

int runData(braidComm_t comm, int rank, cudaStream_t a, cudaStream_t b) {
  const int peer = 1 - rank;
  Buffer toPeer(kCount), fromPeer(kCount), back(kCount), fromBack(kCount), sumIn(kCount),
      sumOut(kCount), relayed(kCount), single(kCount), singleIn(kCount), empty(0);
  toPeer.host = pattern(rank, kCount, 1);
  back.host = pattern(rank, kCount, 2);
  sumIn.host = pattern(rank, kCount, 3);
  single.host = pattern(rank, kCount, 4);
  const Layout send = layoutOf(rank, true, false), recv = layoutOf(rank, false, false);
  const Layout both = layoutOf(rank, true, true);
  Buffer in(send.total), out(recv.total), inPlace(both.total);
  in.host = alltoallvImage(send, rank, true, 5);
  inPlace.host = alltoallvImage(both, rank, true, 6);
  for (Buffer* buffer : {&toPeer, &fromPeer, &back, &fromBack, &sumIn, &sumOut, &relayed, &single,
                         &singleIn, &empty, &in, &out, &inPlace}) {
    if (!buffer->upload()) return 1;
  }
  int failures = 0;
  auto expect = [&](braidResult_t r, const char* what) {
    if (r == braidSuccess) return;
    std::fprintf(stderr, "rank %d: %s: %s\n", rank, what, braidGetLastError(nullptr));
    ++failures;
  };
  expect(braidGroupStart(), "group start");
  expect(braidSend(toPeer.device, kCount, braidInt32, peer, comm, a), "send");
  expect(braidRecv(fromPeer.device, kCount, braidInt32, peer, comm, a), "recv");
  expect(braidSend(back.device, kCount, braidInt32, peer, comm, b), "send on b");
  expect(braidRecv(fromBack.device, kCount, braidInt32, peer, comm, b), "recv on b");
  expect(braidAllReduce(sumIn.device, sumOut.device, kCount, braidInt32, braidSum, comm, a),
         "allreduce in the group");
  expect(braidSend(empty.device, 0, braidInt32, peer, comm, b), "empty send");
  expect(braidRecv(empty.device, 0, braidInt32, peer, comm, b), "empty recv");
  expect(braidGroupEnd(), "group end");
  expect(braidGroupStart(), "group start");
  expect(braidSend(fromPeer.device, kCount, braidInt32, peer, comm, a), "relay send");
  expect(braidRecv(relayed.device, kCount, braidInt32, peer, comm, a), "relay recv");
  expect(braidGroupEnd(), "group end");
  expect(rank == 0 ? braidSend(single.device, kCount, braidInt32, 1, comm, b)
                   : braidRecv(singleIn.device, kCount, braidInt32, 0, comm, b),
         "single send/recv");
  expect(braidAllToAllv(in.device, send.counts.data(), send.displs.data(), out.device,
                        recv.counts.data(), recv.displs.data(), braidInt32, comm, a),
         "alltoallv");
  expect(braidAllToAllv(inPlace.device, both.counts.data(), both.displs.data(), inPlace.device,
                        both.counts.data(), both.displs.data(), braidInt32, comm, a),
         "alltoallv in place");
  for (cudaStream_t s : {a, b}) {
    if (cudaError_t e = cudaStreamSynchronize(s); e != cudaSuccess) {
      std::fprintf(stderr, "rank %d: stream: %s\n", rank, cudaGetErrorString(e));
      return 1;
    }
  }
  std::vector<int32_t> sums(kCount);
  for (size_t i = 0; i < kCount; ++i) {
    sums[i] = static_cast<int32_t>(uint32_t(value(0, i, 3)) + uint32_t(value(1, i, 3)));
  }
  std::vector<std::string> wrong = {
      fromPeer.check(pattern(peer, kCount, 1), "from the peer"),
      fromBack.check(pattern(peer, kCount, 2), "from the peer on b"),
      sumOut.check(sums, "allreduce in the group"),
      relayed.check(pattern(rank, kCount, 1), "relayed (own data back)"),
      out.check(alltoallvImage(recv, rank, false, 5), "alltoallv"),
      inPlace.check(alltoallvImage(both, rank, false, 6), "alltoallv in place")};
  if (rank == 1) wrong.push_back(singleIn.check(pattern(0, kCount, 4), "single recv"));
  for (const std::string& w : wrong) {
    if (w.empty()) continue;
    std::fprintf(stderr, "rank %d: %s\n", rank, w.c_str());
    ++failures;
  }
  braidResult_t async = braidSuccess;
  braidCommGetAsyncError(comm, &async);
  if (async != braidSuccess) ++failures;
  return failures == 0 ? 0 : 1;
}

// Rank 1 receives fewer elements than rank 0 sends: both streams come back, both ranks
// have an async error.
int runMismatch(braidComm_t comm, int rank, cudaStream_t a) {
  Buffer buffer(4096), after(16);
  if (!buffer.upload() || !after.upload()) return 1;
  braidGroupStart();
  if (rank == 0) braidSend(buffer.device, 4096, braidInt32, 1, comm, a);
  if (rank == 1) braidRecv(buffer.device, 1000, braidInt32, 0, comm, a);
  braidGroupEnd();
  (void)braidAllReduce(after.device, after.device, 16, braidInt32, braidSum, comm, a);
  if (cudaError_t e = cudaStreamSynchronize(a); e != cudaSuccess) {
    std::fprintf(stderr, "rank %d: stream: %s\n", rank, cudaGetErrorString(e));
    return 1;
  }
  int32_t x = 1;
  const braidResult_t next = braidAllReduce(&x, &x, 1, braidInt32, braidSum, comm, nullptr);
  braidResult_t async = braidSuccess;
  braidCommGetAsyncError(comm, &async);
  std::printf("rank %d: next call %d, async %d: %s\n", rank, int(next), int(async),
              braidGetLastError(comm));
  return next != braidSuccess && async != braidSuccess ? 0 : 1;
}

// CUDA graph capture: an ordinary all-reduce, then a captured all-reduce and send/recv
// group replayed five times with new inputs copied in before each replay, and an ordinary
// all-reduce of each replay's result after it (tests/unit/device_proxy_capture_test.cc).
int runCapture(braidComm_t comm, int rank, cudaStream_t a) {
  const int peer = 1 - rank;
  constexpr int kReplays = 5;
  Buffer in(kCount), out(kCount), doubled(kCount), toPeer(kCount), fromPeer(kCount);
  in.host = pattern(rank, kCount, 100);
  for (Buffer* buffer : {&in, &out, &doubled, &toPeer, &fromPeer}) {
    if (!buffer->upload()) return 1;
  }
  auto sums = [](int salt) {
    std::vector<int32_t> v(kCount);
    for (size_t i = 0; i < kCount; ++i) {
      v[i] = static_cast<int32_t>(uint32_t(value(0, i, salt)) + uint32_t(value(1, i, salt)));
    }
    return v;
  };
  int failures = 0;
  auto expect = [&](bool ok, const std::string& what) {
    if (ok) return;
    std::fprintf(stderr, "rank %d: %s: %s\n", rank, what.c_str(), braidGetLastError(nullptr));
    ++failures;
  };
  expect(
      braidAllReduce(in.device, out.device, kCount, braidInt32, braidSum, comm, a) == braidSuccess,
      "allreduce before the capture");
  expect(cudaStreamSynchronize(a) == cudaSuccess, "synchronize");
  std::string wrong = out.check(sums(100), "allreduce before the capture");
  expect(wrong.empty(), wrong);

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  expect(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal) == cudaSuccess, "begin capture");
  expect(
      braidAllReduce(in.device, out.device, kCount, braidInt32, braidSum, comm, a) == braidSuccess,
      "captured allreduce");
  expect(braidGroupStart() == braidSuccess, "group start");
  expect(braidSend(toPeer.device, kCount, braidInt32, peer, comm, a) == braidSuccess,
         "captured send");
  expect(braidRecv(fromPeer.device, kCount, braidInt32, peer, comm, a) == braidSuccess,
         "captured recv");
  expect(braidGroupEnd() == braidSuccess, "captured group");
  expect(cudaStreamEndCapture(a, &graph) == cudaSuccess, "end capture");
  expect(graph != nullptr && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess, "instantiate");
  if (failures != 0) return 1;
  std::vector<std::vector<int32_t>> inputs, sends;  // live until the copies have run
  for (int replay = 0; replay < kReplays; ++replay) {
    inputs.push_back(pattern(rank, kCount, replay));
    sends.push_back(pattern(rank, kCount, 50 + replay));
    cudaMemcpyAsync(in.device, inputs.back().data(), kCount * 4, cudaMemcpyHostToDevice, a);
    cudaMemcpyAsync(toPeer.device, sends.back().data(), kCount * 4, cudaMemcpyHostToDevice, a);
    expect(cudaGraphLaunch(exec, a) == cudaSuccess, "graph launch");
    expect(braidAllReduce(out.device, doubled.device, kCount, braidInt32, braidSum, comm, a) ==
               braidSuccess,
           "allreduce after the replay");
    expect(cudaStreamSynchronize(a) == cudaSuccess, "synchronize");
    std::vector<int32_t> twice = sums(replay);
    for (int32_t& v : twice) v = static_cast<int32_t>(2u * uint32_t(v));
    for (const std::string& w :
         {out.check(sums(replay), "replayed allreduce"),
          fromPeer.check(pattern(peer, kCount, 50 + replay), "replayed recv"),
          doubled.check(twice, "allreduce after the replay")}) {
      expect(w.empty(), "replay " + std::to_string(replay) + ": " + w);
    }
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  braidResult_t async = braidSuccess;
  braidCommGetAsyncError(comm, &async);
  expect(async == braidSuccess, "async error");
  return failures == 0 ? 0 : 1;
}

int runRank(int rank, const braidUniqueId& id, const std::string& mode) {
  if (!haveCudaDevice()) return kSkipped;
  cudaSetDevice(0);
  cudaStream_t a, b;
  cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
  braidComm_t comm = nullptr;
  if (braidCommInitRank(&comm, kRanks, id, rank) != braidSuccess) {
    std::fprintf(stderr, "rank %d: init failed\n", rank);
    return 1;
  }
  const int result = mode == "--mismatch"  ? runMismatch(comm, rank, a)
                     : mode == "--capture" ? runCapture(comm, rank, a)
                                           : runData(comm, rank, a, b);
  braidCommDestroy(comm);
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
  std::printf("rank %d: %s\n", rank, result == 0 ? "ok" : "FAILED");
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || (std::strcmp(argv[1], "shm") != 0 && std::strcmp(argv[1], "socket") != 0)) {
    std::fprintf(stderr, "usage: %s <shm|socket> [--mismatch|--capture]\n", argv[0]);
    return 2;
  }
  const std::string mode = argc > 2 ? argv[2] : "";
  setenv("BRAID_TRANSPORT", argv[1], 1);
  return runForkedGpuRanks(
      "device_proxy_p2p", kRanks, kDeadlineSeconds,
      [&](int rank, const braidUniqueId& id) { return runRank(rank, id, mode); });
}
