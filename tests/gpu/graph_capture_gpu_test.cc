// CUDA graph capture of collectives on the kernel path: braidCommInitAll with every rank on
// GPU 0, each rank's calls captured from its own stream into its own graph, and the graphs
// replayed several times with new inputs, every result checked against the float64
// reference. Capture can work here because the FIFO counters and ends live in device memory and
// only grow (collectives/device/fifo.h): a replayed kernel continues from wherever the last call
// left them, exactly like a fresh launch. The first call of a shape uploads its plan
// (cudaMalloc), so each test makes one uncaptured warm-up call first, as NCCL asks of its
// users before capture.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "braid.h"
#include "cuda_device.h"  // this folder
#include "support/element_bits.h"
#include "support/input_pattern.h"
#include "support/reference.h"

namespace {

// n ranks on GPU 0, each with its own stream and buffers of `count` elements of `type`.
class Ranks {
 public:
  Ranks(int n, braidDataType_t type, size_t count)
      : n_(n), type_(type), count_(count), bytes_(count * braid::testing::elementBytes(type)) {}

  void open() {
    comms_.resize(size_t(n_));
    const std::vector<int> devlist(size_t(n_), 0);
    ASSERT_EQ(braidCommInitAll(comms_.data(), n_, devlist.data()), braidSuccess)
        << braidGetLastError(nullptr);
    for (int r = 0; r < n_; ++r) {
      cudaStream_t s = nullptr;
      void* send = nullptr;
      void* recv = nullptr;
      ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&send, bytes_ * size_t(n_)), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&recv, bytes_ * size_t(n_)), cudaSuccess);
      streams_.push_back(s);
      send_.push_back(send);
      recv_.push_back(recv);
    }
  }

  ~Ranks() {
    for (int r = 0; r < int(streams_.size()); ++r) {
      cudaStreamSynchronize(streams_[size_t(r)]);
      cudaFree(send_[size_t(r)]);
      cudaFree(recv_[size_t(r)]);
      cudaStreamDestroy(streams_[size_t(r)]);
    }
    for (braidComm_t c : comms_) braidCommDestroy(c);
  }

  // Every rank's send buffer from `pattern`.
  void fill(const braid::testing::InputPattern& pattern) {
    for (int r = 0; r < n_; ++r) {
      std::vector<uint8_t> host(bytes_);
      pattern.fill(r, 0, count_, host.data());
      ASSERT_EQ(cudaMemcpy(send_[size_t(r)], host.data(), bytes_, cudaMemcpyHostToDevice),
                cudaSuccess);
    }
  }

  std::vector<uint8_t> result(int r, size_t bytes) {
    std::vector<uint8_t> got(bytes);
    EXPECT_EQ(cudaStreamSynchronize(streams_[size_t(r)]), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(got.data(), recv_[size_t(r)], bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    return got;
  }

  int n_;
  braidDataType_t type_;
  size_t count_;
  size_t bytes_;
  std::vector<braidComm_t> comms_;
  std::vector<cudaStream_t> streams_;
  std::vector<void*> send_, recv_;
};

// Captures `call(rank)` on every rank's stream into one graph per rank.
template <typename Call>
std::vector<cudaGraphExec_t> captureEachRank(Ranks& ranks, Call call) {
  std::vector<cudaGraphExec_t> execs;
  for (int r = 0; r < ranks.n_; ++r) {
    cudaStream_t s = ranks.streams_[size_t(r)];
    EXPECT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    const braidResult_t result = call(r);
    cudaGraph_t graph = nullptr;
    EXPECT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
    EXPECT_EQ(result, braidSuccess) << "rank " << r << ": " << braidGetLastError(ranks.comms_[r]);
    cudaGraphExec_t exec = nullptr;
    EXPECT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    cudaGraphDestroy(graph);
    execs.push_back(exec);
  }
  return execs;
}

// Makes `call(rank)` once uncaptured on every rank (the plan upload), captures it per rank,
// then replays the graphs `replays` times with new inputs; every rank's result must be the
// all-reduce (`op`) of the inputs.
template <typename Call>
void warmCaptureReplay(Ranks& ranks, braidRedOp_t op, int replays, Call call) {
  const int n = ranks.n_;
  for (int r = 0; r < n; ++r) ASSERT_EQ(call(r), braidSuccess);
  for (int r = 0; r < n; ++r) ASSERT_EQ(cudaStreamSynchronize(ranks.streams_[r]), cudaSuccess);
  std::vector<cudaGraphExec_t> execs = captureEachRank(ranks, call);
  for (int replay = 0; replay < replays; ++replay) {
    const braid::testing::InputPattern pattern(ranks.type_, op, 100 + replay);
    ASSERT_NO_FATAL_FAILURE(ranks.fill(pattern));
    for (int r = 0; r < n; ++r) {
      ASSERT_EQ(cudaGraphLaunch(execs[size_t(r)], ranks.streams_[size_t(r)]), cudaSuccess);
    }
    const auto source = braid::testing::sourceFromPattern(pattern);
    for (int r = 0; r < n; ++r) {
      const std::vector<uint8_t> got = ranks.result(r, ranks.bytes_);
      EXPECT_EQ(
          braid::testing::checkReduced(ranks.type_, op, n, got.data(), ranks.count_, source, 0), "")
          << "n=" << n << " count=" << ranks.count_ << " replay " << replay << " rank " << r;
    }
  }
  for (cudaGraphExec_t e : execs) cudaGraphExecDestroy(e);
}

TEST(GraphCapture, AllReduceReplaysWithNewInputs) {
  if (!braid::testing::haveCudaDevice()) GTEST_SKIP() << "no CUDA device";
  for (int n : {2, 4}) {
    for (size_t count : {size_t(1), size_t(3000), size_t(1) << 20}) {
      Ranks ranks(n, braidFloat32, count);
      ASSERT_NO_FATAL_FAILURE(ranks.open());
      warmCaptureReplay(ranks, braidSum, 4, [&](int r) {
        return braidAllReduce(ranks.send_[size_t(r)], ranks.recv_[size_t(r)], count, braidFloat32,
                              braidSum, ranks.comms_[size_t(r)], ranks.streams_[size_t(r)]);
      });
    }
  }
}

// Several collectives in one graph: the FIFO counters advance across them within a replay
// and across replays.
TEST(GraphCapture, SeveralCollectivesInOneGraph) {
  if (!braid::testing::haveCudaDevice()) GTEST_SKIP() << "no CUDA device";
  const size_t count = 4099;
  Ranks ranks(3, braidInt32, count);
  ASSERT_NO_FATAL_FAILURE(ranks.open());
  // All-reduce into recv, then all-reduce (max) of that in place: every rank ends with the
  // sum, and a wrong sum on any rank would show on all.
  warmCaptureReplay(ranks, braidSum, 3, [&](int r) {
    braidComm_t c = ranks.comms_[size_t(r)];
    cudaStream_t s = ranks.streams_[size_t(r)];
    void* recv = ranks.recv_[size_t(r)];
    braidResult_t a =
        braidAllReduce(ranks.send_[size_t(r)], recv, count, braidInt32, braidSum, c, s);
    if (a != braidSuccess) return a;
    return braidAllReduce(recv, recv, count, braidInt32, braidMax, c, s);
  });
}

}  // namespace
