// IpcDeviceGroup (collectives/device/cuda/ipc_group.h) with its ranks on threads of this
// process and an in-process allgather standing in for the bootstrap:
//  - without a GPU (CI): creation fails on every rank alike, naming the rank that could not
//    set up, and a failing allgather is reported — nobody waits for a peer that gave up;
//  - on a GPU: the group runs an all-reduce, and a mismatched call (the ranks disagree on
//    the size, hence on the protocol) ends in a reported stall within seconds, not a hang.
#include "collectives/device/cuda/ipc_group.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "cuda_device.h"  // this folder
#include "support/device_rank_case.h"

namespace braid::device {
namespace {

// An allgather among `n` threads: each round, every rank deposits its bytes and leaves with
// all of them once the last has arrived.
class ThreadAllGather {
 public:
  explicit ThreadAllGather(int n) : n_(n) {}
  Status operator()(int rank, void* data, size_t bytes) {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t round = round_;
    if (pool_.size() < bytes * size_t(n_)) pool_.resize(bytes * size_t(n_));
    std::memcpy(&pool_[size_t(rank) * bytes], static_cast<uint8_t*>(data) + size_t(rank) * bytes,
                bytes);
    if (++arrived_ == n_) {
      result_ = pool_;
      arrived_ = 0;
      ++round_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return round_ != round; });
    }
    std::memcpy(data, result_.data(), bytes * size_t(n_));
    return Status::ok();
  }

 private:
  const int n_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t round_ = 0;
  std::vector<uint8_t> pool_, result_;
};

using Groups = std::vector<Result<std::shared_ptr<IpcDeviceGroup>>>;

Groups createAll(int n, const PeerGroupOptions& options, bool failGather = false) {
  ThreadAllGather gather(n);
  Groups groups(size_t(n), internalError("not run"));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      PeerAllGather exchange = [&, r](void* data, size_t bytes) -> Status {
        if (failGather) return internalError("bootstrap: peer 1 closed the connection");
        return gather(r, data, bytes);
      };
      groups[size_t(r)] = IpcDeviceGroup::create(r, n, 0, options, exchange);
    });
  }
  for (auto& t : threads) t.join();
  return groups;
}

TEST(IpcGroup, EveryRankFailsAlikeWithoutADevice) {
  if (testing::haveCudaDevice()) GTEST_SKIP() << "a CUDA device is present";
  Groups groups = createAll(3, PeerGroupOptions{});
  for (int r = 0; r < 3; ++r) {
    ASSERT_FALSE(groups[size_t(r)].isOk()) << "rank " << r;
    // Each rank reports its own failure first; all three failed, so each names itself.
    const std::string m = groups[size_t(r)].status().message();
    EXPECT_NE(m.find("rank " + std::to_string(r) + " could not set up"), std::string::npos) << m;
    EXPECT_NE(m.find("CUDA"), std::string::npos) << m;
  }
}

TEST(IpcGroup, AFailedExchangeIsReported) {
  if (testing::haveCudaDevice()) GTEST_SKIP() << "needs the no-device path to be quick";
  Groups groups = createAll(2, PeerGroupOptions{}, /*failGather=*/true);
  for (auto& g : groups) {
    ASSERT_FALSE(g.isOk());
    EXPECT_NE(g.status().message().find("peer 1 closed"), std::string::npos)
        << g.status().message();
  }
}

TEST(IpcGroup, BadArgumentsAreRefused) {
  ThreadAllGather gather(1);
  PeerAllGather exchange = [&](void* d, size_t b) { return gather(0, d, b); };
  EXPECT_EQ(IpcDeviceGroup::create(2, 2, 0, PeerGroupOptions{}, exchange).status().code(),
            braidInvalidArgument);
  PeerGroupOptions odd;
  odd.fifos.simpleSlotBytes = 100;
  EXPECT_EQ(IpcDeviceGroup::create(0, 1, 0, odd, exchange).status().code(), braidInvalidArgument);
}

// Enqueues `counts[r]` floats of all-reduce on each rank's own stream; returns the outputs.
std::vector<std::vector<uint8_t>> allReduce(Groups& groups, const std::vector<size_t>& counts) {
  const int n = int(groups.size());
  std::vector<std::vector<uint8_t>> outputs(static_cast<size_t>(n));
  std::vector<cudaStream_t> streams(static_cast<size_t>(n));
  std::vector<void*> buffers(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    coll::CollArgs a;
    a.count = counts[size_t(r)];
    a.rank = r;
    a.nranks = n;
    std::vector<uint8_t> input(a.count * 4 + 1);
    testing::fillRankInput(a, testing::patternFor(a, 3), input.data());
    EXPECT_EQ(cudaStreamCreateWithFlags(&streams[size_t(r)], cudaStreamNonBlocking), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&buffers[size_t(r)], input.size()), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(buffers[size_t(r)], input.data(), input.size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    a.inPlace = true;
    Status s = (*groups[size_t(r)])
                   ->enqueue(a, buffers[size_t(r)], buffers[size_t(r)], streams[size_t(r)]);
    EXPECT_TRUE(s.isOk()) << s.message();
  }
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(cudaStreamSynchronize(streams[size_t(r)]), cudaSuccess);
    outputs[size_t(r)].resize(counts[size_t(r)] * 4 + 1);
    cudaMemcpy(outputs[size_t(r)].data(), buffers[size_t(r)], outputs[size_t(r)].size(),
               cudaMemcpyDeviceToHost);
    cudaFree(buffers[size_t(r)]);
    cudaStreamDestroy(streams[size_t(r)]);
  }
  return outputs;
}

TEST(IpcGroupGpu, AllReduceThenAMismatchBecomesAStallError) {
  if (!testing::haveCudaDevice()) GTEST_SKIP() << "no CUDA device";
  PeerGroupOptions options;
  options.spinLimit = uint64_t(1) << 22;  // a stall ends in well under a second
  Groups groups = createAll(2, options);
  for (auto& g : groups) ASSERT_TRUE(g.isOk()) << g.status().message();
  for (size_t count : {size_t(4097), size_t(1) << 20}) {  // LL, then Simple
    auto outputs = allReduce(groups, {count, count});
    coll::CollArgs a;
    a.count = count;
    a.nranks = 2;
    for (int r = 0; r < 2; ++r) {
      a.rank = r;
      EXPECT_EQ(testing::checkRankOutput(a, testing::patternFor(a, 3), outputs[size_t(r)].data()),
                "")
          << "rank " << r << " count " << count;
    }
  }
  // Rank 0 runs LL, rank 1 Simple: each waits on a FIFO the other never fills.
  allReduce(groups, {4097, size_t(1) << 20});
  for (auto& g : groups) {
    Status s = (*g)->check();
    EXPECT_FALSE(s.isOk());
    EXPECT_NE(s.message().find("stalled"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace braid::device
