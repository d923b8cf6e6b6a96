// Tests of single-copy (rendezvous) transfers in the shm transport: ranks on
// threads (plain memcpy from the sender's buffer) and in forked processes
// (process_vm_readv, reduce through the bounce buffer), the fallback to two
// copies when CMA is unavailable, and failures during a rendezvous.
//
// Whether a send went single-copy is observed from outside: a 16 KiB send
// fits in the FIFO, so a two-copy send is done at once, while a single-copy
// send stays pending until the receiver has read it.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/kernels/reduce.h"
#include "support/drive_requests.h"
#include "support/local_bootstrap.h"
#include "support/spawn.h"
#include "transports/shm/shm_transport.h"

namespace braid::transport {
namespace {

using braid::testing::LocalBootstrapGroup;
using braid::testing::ScopedEnv;

constexpr size_t kThreshold = 8192;  // BRAID_SHM_SINGLE_COPY_BYTES in these tests
const std::string kThresholdText = std::to_string(kThreshold);

// The threshold comes from the environment as in a real communicator (the
// tests set BRAID_SHM_SINGLE_COPY_BYTES per case); the FIFO is small.
Config smallConfig() {
  auto fromEnv = Config::fromEnv();
  Config config = fromEnv.isOk() ? *fromEnv : Config{};
  config.shmSlotBytes = 4096;
  config.shmSlots = 8;  // 32 KiB of FIFO: a two-copy 16 KiB send completes at once
  return config;
}

uint8_t patternByte(int src, size_t seq, size_t i) {
  return static_cast<uint8_t>(src * 131 + seq * 7 + i * 13 + (i >> 9));
}
std::vector<uint8_t> pattern(int src, size_t seq, size_t bytes) {
  std::vector<uint8_t> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = patternByte(src, seq, i);
  return v;
}

// Progresses the single connector of a 2-rank transport until every request is
// done, sleeping in waitForActivity when nothing moved.
Status drive(Transport& t, int peer, const std::vector<Request>& reqs) {
  return braid::testing::driveRequests(t, {peer}, braid::testing::pointersTo(reqs), 20);
}

int fail(int code, const char* what, const Status& s = Status::ok()) {
  fprintf(stderr, "failure %d: %s %s\n", code, what, s.message().c_str());
  return code;
}

// Rank 0 sends 16 KiB to rank 1, which posts its receive only after a barrier.
// Returns 0 when the send was single-copy exactly when `expectSingleCopy`.
int singleCopyObserved(Bootstrap& b, Transport& t, bool expectSingleCopy) {
  const int rank = b.rank();
  const size_t bytes = 16 << 10;
  std::vector<uint8_t> buf = rank == 0 ? pattern(0, 99, bytes) : std::vector<uint8_t>(bytes);
  std::vector<Request> reqs(1);
  bool doneEarly = false;
  if (rank == 0) {
    if (!t.connector(1)->postSend(buf.data(), bytes, &reqs[0]).isOk()) return fail(30, "post");
    for (int i = 0; i < 3; ++i) {
      bool moved;
      if (!t.connector(1)->progress(&moved).isOk()) return fail(31, "progress");
    }
    doneEarly = reqs[0].done;
  }
  if (!b.barrier().isOk()) return fail(32, "barrier");
  if (rank == 1 && !t.connector(0)->postRecv({buf.data()}, bytes, &reqs[0]).isOk()) {
    return fail(33, "post recv");
  }
  Status s = drive(t, 1 - rank, reqs);
  if (!s.isOk()) return fail(34, "drive", s);
  if (rank == 1 && buf != pattern(0, 99, bytes)) return fail(35, "data");
  if (rank == 0 && doneEarly == expectSingleCopy) return fail(36, "single copy not as expected");
  return 0;
}

// Both ranks send each other copy messages of mixed sizes (below, at and above
// the threshold, one larger than a 4 MiB read piece), then reduce messages of
// odd element counts, all posted at once. Returns 0 or a failure code.
int mixedTraffic(Bootstrap& b, Transport& t) {
  const int rank = b.rank(), peer = 1 - rank;
  Connector* c = t.connector(peer);
  std::vector<size_t> sizes;
  for (size_t k = 0; k < 60; ++k) {
    sizes.push_back(k % 4 == 0 ? kThreshold + k * 1000 : (k * 37) % 9000);
  }
  sizes.insert(sizes.begin() + 10, {kThreshold - 1, kThreshold, (5 << 20) + 3, 0, 1});
  std::vector<std::vector<uint8_t>> out(sizes.size()), in(sizes.size());
  std::vector<Request> reqs(2 * sizes.size() + 4);
  for (size_t k = 0; k < sizes.size(); ++k) {
    out[k] = pattern(rank, k, sizes[k]);
    in[k].assign(sizes[k], 0xEE);
    if (!c->postSend(out[k].data(), sizes[k], &reqs[2 * k]).isOk()) return fail(40, "send");
    if (!c->postRecv({in[k].data()}, sizes[k], &reqs[2 * k + 1]).isOk()) return fail(41, "recv");
  }
  // Reduce: doubles past a 4 MiB read piece and not a whole number of bounce
  // buffers; bytes with an odd count; float32 in place.
  auto value = [](int r, size_t i) { return static_cast<double>((i * 7 + r * 3) % 1000); };
  const size_t nDouble = (5 << 20) / 8 + 3, nByte = 300001;
  std::vector<double> dMine(nDouble), dOut(nDouble, -1);
  std::vector<uint8_t> bMine(nByte), bOut(nByte, 0xEE);
  for (size_t i = 0; i < nDouble; ++i) dMine[i] = value(rank, i);
  for (size_t i = 0; i < nByte; ++i) bMine[i] = static_cast<uint8_t>(i * 3 + rank);
  size_t r = 2 * sizes.size();
  auto u8 = [](auto* p) { return reinterpret_cast<uint8_t*>(p); };
  coll::ReduceFn sumD = coll::reducerFor(braidFloat64, braidSum);
  coll::ReduceFn maxB = coll::reducerFor(braidUint8, braidMax);
  if (!c->postSend(dMine.data(), nDouble * 8, &reqs[r]).isOk() ||
      !c->postSend(bMine.data(), nByte, &reqs[r + 1]).isOk() ||
      !c->postRecv({u8(dOut.data()), u8(dMine.data()), sumD, 8}, nDouble * 8, &reqs[r + 2])
           .isOk() ||
      !c->postRecv({bOut.data(), bMine.data(), maxB, 1}, nByte, &reqs[r + 3]).isOk()) {
    return fail(42, "reduce posts");
  }
  Status s = drive(t, peer, reqs);
  if (!s.isOk()) return fail(43, "drive", s);
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (in[k] != pattern(peer, k, sizes[k]))
      return fail(44, ("message " + std::to_string(k)).c_str());
  }
  for (size_t i = 0; i < nDouble; ++i) {
    if (dOut[i] != value(0, i) + value(1, i)) return fail(45, "double sum");
  }
  for (size_t i = 0; i < nByte; ++i) {
    if (bOut[i] != std::max<uint8_t>(i * 3, i * 3 + 1)) return fail(46, "byte max");
  }
  return 0;
}

// A transport, then the observation and the traffic.
int transferRank(Bootstrap& b, bool expectSingleCopy) {
  auto t = createShmTransport(b, smallConfig());
  if (!t.isOk()) return fail(10, "create", t.status());
  if (int code = singleCopyObserved(b, **t, expectSingleCopy)) return code;
  if (int code = mixedTraffic(b, **t)) return code;
  return b.barrier().isOk() ? 0 : fail(11, "final barrier");
}

void runThreads(const std::function<int(Bootstrap&)>& body) {
  LocalBootstrapGroup group(2, 30);
  braid::testing::runOnRankThreads(
      group, [&](int r, Bootstrap& b) { EXPECT_EQ(body(b), 0) << "rank " << r; });
}

TEST(ShmSingleCopyThreads, MixedSizesAndReducesArriveIntact) {
  ScopedEnv env("BRAID_SHM_SINGLE_COPY_BYTES", kThresholdText);
  runThreads([](Bootstrap& b) { return transferRank(b, true); });
}

TEST(ShmSingleCopyThreads, ThresholdZeroAndNoCmaUseTwoCopies) {
  {
    ScopedEnv env("BRAID_SHM_SINGLE_COPY_BYTES", "0");
    runThreads([](Bootstrap& b) { return transferRank(b, false); });
  }
  ScopedEnv env({{"BRAID_SHM_SINGLE_COPY_BYTES", kThresholdText}, {"BRAID_SHM_TEST_NO_CMA", "1"}});
  runThreads([](Bootstrap& b) { return transferRank(b, false); });
}

TEST(ShmSingleCopyThreads, SizeMismatchIsInvalidUsageNamingThePeer) {
  ScopedEnv env("BRAID_SHM_SINGLE_COPY_BYTES", kThresholdText);
  runThreads([](Bootstrap& b) {
    auto t = createShmTransport(b, smallConfig());
    if (!t.isOk()) return fail(10, "create", t.status());
    std::vector<uint8_t> buf(100000, 1);
    std::vector<Request> reqs(1);
    int code = 0;
    if (b.rank() == 1) {
      bool moved;
      if (!(*t)->connector(0)->postSend(buf.data(), 100000, &reqs[0]).isOk() ||
          !(*t)->connector(0)->progress(&moved).isOk()) {
        code = fail(50, "send");
      }
    } else {
      (void)(*t)->connector(1)->postRecv({buf.data()}, 64000, &reqs[0]);
      Status s = drive(**t, 1, reqs);
      if (s.code() != braidInvalidUsage || s.peer() != 1 ||
          s.message().find("rank 1 sent a message of 100000 bytes") == std::string::npos) {
        code = fail(51, "status", s);
      }
    }
    // The sender keeps its buffer until the receiver has looked.
    return b.barrier().isOk() ? code : fail(52, "barrier");
  });
}

TEST(ShmSingleCopyThreads, MalformedThresholdIsAnErrorNamingTheVariable) {
  ScopedEnv env("BRAID_SHM_SINGLE_COPY_BYTES", "lots");
  auto config = Config::fromEnv();
  ASSERT_FALSE(config.isOk());
  EXPECT_NE(config.status().message().find("BRAID_SHM_SINGLE_COPY_BYTES"), std::string::npos)
      << config.status().message();
}

// ---- Ranks in forked processes ------------------------------------------

// Rank 0 (the test process) and rank 1 (a child) over a socketpair.
class PairBootstrap : public Bootstrap {
 public:
  PairBootstrap(int rank, std::string tag, int fd) : rank_(rank), tag_(std::move(tag)), fd_(fd) {}
  ~PairBootstrap() override { close(fd_); }
  int rank() const override { return rank_; }
  int nranks() const override { return 2; }
  const std::string& commTag() const override { return tag_; }
  const uint8_t* secret() const override { return secret_; }
  std::array<uint8_t, 32> deriveKey(std::string_view) const override { return {}; }  // no TLS
  double timeoutSeconds() const override { return 20; }
  Status barrier() override {
    uint8_t flags[2] = {};
    return allGather(flags, 1);
  }
  Status allGather(void* data, size_t bytes) override {
    auto* p = static_cast<uint8_t*>(data);
    BRAID_RETURN_IF_ERROR(io(p + rank_ * bytes, bytes, true));
    return io(p + (1 - rank_) * bytes, bytes, false);
  }

 private:
  Status io(uint8_t* p, size_t n, bool write) {
    while (n > 0) {
      pollfd pfd{fd_, static_cast<short>(write ? POLLOUT : POLLIN), 0};
      if (poll(&pfd, 1, 20000) <= 0) return timeoutError("pair bootstrap: peer silent");
      ssize_t k = write ? ::send(fd_, p, n, MSG_NOSIGNAL) : ::read(fd_, p, n);
      if (k <= 0) return remoteError("pair bootstrap: peer gone", 1 - rank_);
      p += k;
      n -= static_cast<size_t>(k);
    }
    return Status::ok();
  }
  const int rank_;
  const std::string tag_;
  const int fd_;
  uint8_t secret_[16] = {};
};

// Runs `body` as rank 1 in a child and as rank 0 here; returns rank 0's result
// and stores the child's exit code.
int runPair(const std::function<int(Bootstrap&)>& body, int* childExit) {
  std::string tag = "sc" + std::to_string(getpid()) + "x" +
                    std::to_string(Clock::now().time_since_epoch().count() % 100000);
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    alarm(30);  // never outlive a broken test
    close(sv[0]);
    PairBootstrap bootstrap(1, tag, sv[1]);
    _exit(body(bootstrap));
  }
  close(sv[1]);
  int result;
  {
    PairBootstrap bootstrap(0, tag, sv[0]);
    result = body(bootstrap);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  *childExit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

TEST(ShmSingleCopyProcesses, MixedSizesAndReducesArriveIntact) {
  ScopedEnv env("BRAID_SHM_SINGLE_COPY_BYTES", kThresholdText);
  int childExit = -1;
  EXPECT_EQ(runPair([](Bootstrap& b) { return transferRank(b, true); }, &childExit), 0);
  EXPECT_EQ(childExit, 0);
}

TEST(ShmSingleCopyProcesses, OneRankWithoutCmaMakesBothUseTwoCopies) {
  ScopedEnv env("BRAID_SHM_SINGLE_COPY_BYTES", kThresholdText);
  int childExit = -1;
  auto body = [](Bootstrap& b) {
    if (b.rank() == 1) setenv("BRAID_SHM_TEST_NO_CMA", "1", 1);  // the child only
    return transferRank(b, false);
  };
  EXPECT_EQ(runPair(body, &childExit), 0);
  EXPECT_EQ(childExit, 0);
}

// Rank 1 sends 64 MiB single-copy and dies once rank 0 has read a first piece;
// rank 0 must fail with a braidRemoteError naming rank 1.
int senderDiesRank(Bootstrap& b) {
  auto t = createShmTransport(b, smallConfig());
  if (!t.isOk()) return fail(10, "create", t.status());
  const size_t bytes = 64 << 20;
  std::vector<uint8_t> buf(bytes, 7);
  std::vector<Request> reqs(1);
  bool moved;
  if (b.rank() == 1) {
    if (!(*t)->connector(0)->postSend(buf.data(), bytes, &reqs[0]).isOk() ||
        !(*t)->connector(0)->progress(&moved).isOk() || !b.barrier().isOk() ||
        !b.barrier().isOk()) {
      return fail(60, "sender");
    }
    _exit(3);  // a crash: no destructor, no close
  }
  if (!b.barrier().isOk()) return fail(61, "barrier");
  if (!(*t)->connector(1)->postRecv({buf.data()}, bytes, &reqs[0]).isOk() ||
      !(*t)->connector(1)->progress(&moved).isOk()) {
    return fail(62, "first piece");
  }
  if (reqs[0].completed == 0 || reqs[0].done) return fail(63, "not mid-transfer");
  (void)b.barrier();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the sender is gone
  Status s = drive(**t, 1, reqs);
  if (s.code() != braidRemoteError || s.peer() != 1 ||
      s.message().find("rank 1") == std::string::npos) {
    return fail(64, "status", s);
  }
  return reqs[0].done ? fail(65, "done") : 0;
}

TEST(ShmSingleCopyProcesses, SenderDyingMidTransferIsRemoteError) {
  ScopedEnv env("BRAID_SHM_SINGLE_COPY_BYTES", kThresholdText);
  int childExit = -1;
  EXPECT_EQ(runPair(senderDiesRank, &childExit), 0);
  EXPECT_EQ(childExit, 3);
}

// Rank 0 sends single-copy to rank 1, which dies without receiving; the
// pending send must fail naming rank 1 instead of waiting for the deadline.
int receiverDiesRank(Bootstrap& b) {
  auto t = createShmTransport(b, smallConfig());
  if (!t.isOk()) return fail(10, "create", t.status());
  if (b.rank() == 1) {
    (void)b.barrier();
    _exit(3);
  }
  std::vector<uint8_t> buf(1 << 20, 7);
  std::vector<Request> reqs(1);
  if (!(*t)->connector(1)->postSend(buf.data(), buf.size(), &reqs[0]).isOk()) {
    return fail(70, "post");
  }
  (void)b.barrier();
  auto start = Clock::now();
  Status s = drive(**t, 1, reqs);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (s.code() != braidRemoteError || s.peer() != 1 ||
      s.message().find("died") == std::string::npos) {
    return fail(71, "status", s);
  }
  return seconds < 2 ? 0 : fail(72, "slow detection");
}

TEST(ShmSingleCopyProcesses, ReceiverDyingWhileSenderWaitsIsRemoteError) {
  ScopedEnv env("BRAID_SHM_SINGLE_COPY_BYTES", kThresholdText);
  int childExit = -1;
  EXPECT_EQ(runPair(receiverDiesRank, &childExit), 0);
  EXPECT_EQ(childExit, 3);
}

}  // namespace
}  // namespace braid::transport
