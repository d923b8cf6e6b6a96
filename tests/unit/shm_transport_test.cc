// Tests of the shared-memory transport: ranks on threads (LocalBootstrap) for
// data paths and errors, ranks in forked processes (a socketpair bootstrap
// below) for cross-process wake-ups, crash detection and /dev/shm cleanup.
#include "transports/shm/shm_transport.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/kernels/reduce.h"
#include "support/drive_requests.h"
#include "support/local_bootstrap.h"

namespace braid::transport {
namespace {

using testing::LocalBootstrapGroup;

Config smallConfig(size_t slotBytes = 4096, int slots = 4) {
  Config config;
  config.shmSlotBytes = slotBytes;
  config.shmSlots = slots;
  return config;
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Byte i of the message number `seq` from `src` to `dst`: what the receiver expects.
uint8_t patternByte(int src, int dst, size_t seq, size_t i) {
  return static_cast<uint8_t>(src * 131 + dst * 31 + seq * 7 + i * 13 + (i >> 8));
}
std::vector<uint8_t> pattern(int src, int dst, size_t seq, size_t bytes) {
  std::vector<uint8_t> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = patternByte(src, dst, seq, i);
  return v;
}

// Progresses every connector of `t` until every request is done, sleeping in
// waitForActivity whenever nothing moved (so wake-ups are exercised, not spun past).
Status drive(Transport& t, int self, int nranks, const std::vector<Request>& reqs,
             int maxWaitMs = 100) {
  return braid::testing::driveRequests(t, braid::testing::peersExcept(self, nranks),
                                       braid::testing::pointersTo(reqs), 20, maxWaitMs);
}

// The /dev/shm entries of communicator `tag`.
std::vector<std::string> shmEntries(const std::string& tag) {
  std::vector<std::string> found;
  std::string prefix = "braid-" + tag + "-";
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* e = readdir(dir)) {
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) found.push_back(e->d_name);
    }
    closedir(dir);
  }
  return found;
}

void runThreads(int nranks, const testing::RankThreadBody& body, double timeoutSeconds = 30) {
  LocalBootstrapGroup group(nranks, timeoutSeconds);
  testing::runOnRankThreads(group, body);
}

// Sends `sizes[k]` bytes from `from` to `to` and checks them; the other ranks idle.
void exchange(Transport& t, int rank, int from, int to, const std::vector<size_t>& sizes,
              int maxWaitMs = 100) {
  std::vector<std::vector<uint8_t>> bufs(sizes.size());
  std::vector<Request> reqs(sizes.size());
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (rank == from) {
      bufs[k] = pattern(from, to, k, sizes[k]);
      ASSERT_TRUE(t.connector(to)->postSend(bufs[k].data(), sizes[k], &reqs[k]).isOk());
    } else {
      bufs[k].assign(sizes[k], 0xEE);
      ASSERT_TRUE(t.connector(from)->postRecv({bufs[k].data()}, sizes[k], &reqs[k]).isOk());
    }
  }
  Status s = drive(t, rank, 2, reqs, maxWaitMs);
  ASSERT_TRUE(s.isOk()) << s.message();
  for (size_t k = 0; k < sizes.size(); ++k) {
    EXPECT_EQ(reqs[k].completed, sizes[k]);
    if (rank == to) {
      EXPECT_EQ(bufs[k], pattern(from, to, k, sizes[k])) << "message " << k;
    }
  }
}

TEST(ShmTransport, PingPongVariousSizesAndNoSegmentLeft) {
  // 40 and 41 straddle the largest message that travels inside the slot header (kLineBytes).
  const std::vector<size_t> sizes = {0,  1,    7,    39,   40,           41,
                                     64, 4095, 4096, 4097, 3 * 4096 + 5, (1 << 20) + 3};
  runThreads(2, [&](int rank, Bootstrap& b) {
    auto t = createShmTransport(b, smallConfig());
    ASSERT_TRUE(t.isOk()) << t.status().message();
    EXPECT_STREQ((*t)->name(), "shm");
    EXPECT_EQ((*t)->connector(rank), nullptr);
    EXPECT_EQ((*t)->connector(2), nullptr);
    EXPECT_EQ((*t)->connector(1 - rank)->peer(), 1 - rank);
    ASSERT_TRUE(b.barrier().isOk());
    if (rank == 0) {
      EXPECT_TRUE(shmEntries(b.commTag()).empty());
    }
    for (size_t size : sizes) {
      exchange(**t, rank, 0, 1, {size});
      exchange(**t, rank, 1, 0, {size});
    }
  });
}

TEST(ShmTransport, ManyMessagesArriveInOrderBothWays) {
  std::vector<size_t> sizes;
  for (size_t k = 0; k < 400; ++k) sizes.push_back((k * 37) % 9000);  // includes 0 and > 2 slots
  runThreads(2, [&](int rank, Bootstrap& b) {
    auto t = createShmTransport(b, smallConfig(4096, 3));
    ASSERT_TRUE(t.isOk()) << t.status().message();
    // Both directions at once: each rank's sends and receives are in flight together.
    std::vector<std::vector<uint8_t>> out(sizes.size()), in(sizes.size());
    std::vector<Request> reqs(2 * sizes.size());
    Connector* c = (*t)->connector(1 - rank);
    for (size_t k = 0; k < sizes.size(); ++k) {
      out[k] = pattern(rank, 1 - rank, k, sizes[k]);
      in[k].assign(sizes[k], 0);
      ASSERT_TRUE(c->postSend(out[k].data(), sizes[k], &reqs[2 * k]).isOk());
      ASSERT_TRUE(c->postRecv({in[k].data()}, sizes[k], &reqs[2 * k + 1]).isOk());
    }
    Status s = drive(**t, rank, 2, reqs);
    ASSERT_TRUE(s.isOk()) << s.message();
    for (size_t k = 0; k < sizes.size(); ++k) {
      EXPECT_EQ(in[k], pattern(1 - rank, rank, k, sizes[k])) << "message " << k;
    }
  });
}

TEST(ShmTransport, FusedRecvReduceSumsFloat32) {
  coll::ReduceFn sum = coll::reducerFor(braidFloat32, braidSum);
  ASSERT_NE(sum, nullptr);
  const size_t count = 10007;  // odd, spans several 4 KiB slots
  auto value = [](int rank, size_t i) { return static_cast<float>((i * 7 + rank * 3) % 1000); };
  runThreads(2, [&](int rank, Bootstrap& b) {
    auto t = createShmTransport(b, smallConfig());
    ASSERT_TRUE(t.isOk()) << t.status().message();
    std::vector<float> mine(count), out(count, -1.0f), inPlace(count);
    for (size_t i = 0; i < count; ++i) mine[i] = inPlace[i] = value(rank, i);
    std::vector<Request> reqs(4);
    Connector* c = (*t)->connector(1 - rank);
    const size_t bytes = count * sizeof(float);
    ASSERT_TRUE(c->postSend(mine.data(), bytes, &reqs[0]).isOk());
    ASSERT_TRUE(c->postSend(mine.data(), bytes, &reqs[1]).isOk());
    RecvSink toOut{reinterpret_cast<uint8_t*>(out.data()),
                   reinterpret_cast<const uint8_t*>(mine.data()), sum, sizeof(float)};
    RecvSink toSelf{reinterpret_cast<uint8_t*>(inPlace.data()),
                    reinterpret_cast<const uint8_t*>(inPlace.data()), sum, sizeof(float)};
    ASSERT_TRUE(c->postRecv(toOut, bytes, &reqs[2]).isOk());
    ASSERT_TRUE(c->postRecv(toSelf, bytes, &reqs[3]).isOk());
    Status s = drive(**t, rank, 2, reqs);
    ASSERT_TRUE(s.isOk()) << s.message();
    for (size_t i = 0; i < count; ++i) {
      float expected = value(0, i) + value(1, i);  // small integers: exact in float
      ASSERT_EQ(out[i], expected) << "element " << i;
      ASSERT_EQ(inPlace[i], expected) << "element " << i;
    }
  });
}

TEST(ShmTransport, AllToAllAmongManyRanksDoesNotDeadlock) {
  for (int nranks : {4, 8}) {
    runThreads(nranks, [&](int rank, Bootstrap& b) {
      auto t = createShmTransport(b, smallConfig(4096, 2));
      ASSERT_TRUE(t.isOk()) << t.status().message();
      const int rounds = 3;
      auto size = [](int src, int dst, int k) -> size_t {
        return (src * 7 + dst * 3 + k * 11) % 5 * 9000 + k;  // 0 .. ~36 KB: FIFOs fill up
      };
      std::vector<std::vector<uint8_t>> out, in;
      std::vector<Request> reqs(2 * rounds * (nranks - 1));  // a send and a receive per pair
      std::vector<int> inFrom;
      for (int k = 0; k < rounds; ++k) {
        for (int peer = 0; peer < nranks; ++peer) {
          if (peer == rank) continue;
          out.push_back(pattern(rank, peer, k, size(rank, peer, k)));
          in.emplace_back(size(peer, rank, k), 0);
          inFrom.push_back(peer);
          Request* r = &reqs[2 * (out.size() - 1)];
          Connector* c = (*t)->connector(peer);
          ASSERT_TRUE(c->postSend(out.back().data(), out.back().size(), r).isOk());
          ASSERT_TRUE(c->postRecv({in.back().data()}, in.back().size(), r + 1).isOk());
        }
      }
      Status s = drive(**t, rank, nranks, reqs);
      ASSERT_TRUE(s.isOk()) << "rank " << rank << ": " << s.message();
      for (size_t m = 0; m < in.size(); ++m) {
        int k = static_cast<int>(m) / (nranks - 1);
        EXPECT_EQ(in[m], pattern(inFrom[m], rank, k, size(inFrom[m], rank, k)));
      }
    });
  }
}

TEST(ShmTransport, SizeMismatchIsInvalidUsageNamingThePeer) {
  runThreads(2, [&](int rank, Bootstrap& b) {
    auto t = createShmTransport(b, smallConfig());
    ASSERT_TRUE(t.isOk()) << t.status().message();
    std::vector<uint8_t> buf(100, 1);
    std::vector<Request> reqs(1);
    if (rank == 1) {
      ASSERT_TRUE((*t)->connector(0)->postSend(buf.data(), 100, &reqs[0]).isOk());
      EXPECT_TRUE(drive(**t, 1, 2, reqs).isOk());  // buffered: done without the receiver
    } else {
      ASSERT_TRUE((*t)->connector(1)->postRecv({buf.data()}, 64, &reqs[0]).isOk());
      Status s = drive(**t, 0, 2, reqs);
      EXPECT_EQ(s.code(), braidInvalidUsage);
      EXPECT_EQ(s.peer(), 1);
      EXPECT_NE(s.message().find("rank 1 sent a message of 100 bytes"), std::string::npos)
          << s.message();
      bool moved;  // sticky: the stream cannot resynchronise
      EXPECT_EQ((*t)->connector(1)->progress(&moved).code(), braidInvalidUsage);
    }
    ASSERT_TRUE(b.barrier().isOk());  // rank 1 keeps its transport until rank 0 has looked
  });
}

TEST(ShmTransport, RejectsBadArguments) {
  runThreads(2, [&](int rank, Bootstrap& b) {
    auto t = createShmTransport(b, smallConfig());
    ASSERT_TRUE(t.isOk()) << t.status().message();
    Connector* c = (*t)->connector(1 - rank);
    Request req;
    uint8_t buf[24];
    coll::ReduceFn sum = coll::reducerFor(braidFloat32, braidSum);
    EXPECT_EQ(c->postSend(nullptr, 8, &req).code(), braidInvalidArgument);
    EXPECT_EQ(c->postRecv({nullptr}, 8, &req).code(), braidInvalidArgument);
    EXPECT_EQ(c->postRecv({buf, buf, sum, 3}, 24, &req).code(), braidInvalidArgument);
    EXPECT_EQ(c->postRecv({buf, buf, sum, 4}, 6, &req).code(), braidInvalidArgument);
    EXPECT_EQ(c->postRecv({buf, nullptr, sum, 4}, 8, &req).code(), braidInvalidArgument);
  });
  Config bad = smallConfig(100, 4);  // not a multiple of 64
  runThreads(2, [&](int, Bootstrap& b) {
    auto t = createShmTransport(b, bad);
    EXPECT_EQ(t.status().code(), braidInvalidArgument);
    EXPECT_NE(t.status().message().find("BRAID_SHM_SLOT_BYTES"), std::string::npos);
  });
}

TEST(ShmTransport, ConfigMismatchFailsEveryRankAndLeavesNoSegment) {
  std::string tag;
  runThreads(3, [&](int rank, Bootstrap& b) {
    if (rank == 0) tag = b.commTag();
    auto t = createShmTransport(b, smallConfig(4096, rank == 1 ? 2 : 4));
    EXPECT_EQ(t.status().code(), braidInvalidUsage);
    EXPECT_EQ(t.status().peer(), 1);
    EXPECT_NE(t.status().message().find("rank 1 uses"), std::string::npos) << t.status().message();
  });
  EXPECT_TRUE(shmEntries(tag).empty());
}

TEST(ShmTransport, SegmentCreationFailureFailsEveryRankAndCleansUp) {
  LocalBootstrapGroup group(3);
  // A stale segment under rank 1's name: its creation fails (names are never reused).
  std::string stale = "/braid-" + group.tag() + "-1";
  int fd = shm_open(stale.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  close(fd);
  std::vector<Status> results = testing::statusesOnRankThreads(
      group, [](int, Bootstrap& b) { return createShmTransport(b, smallConfig()).status(); });
  EXPECT_EQ(results[1].code(), braidSystemError);
  for (int r : {0, 2}) {
    EXPECT_EQ(results[r].code(), braidRemoteError);
    EXPECT_EQ(results[r].peer(), 1);
  }
  EXPECT_EQ(shmEntries(group.tag()),
            std::vector<std::string>{stale.substr(1)});  // only the stale one
  shm_unlink(stale.c_str());
}

TEST(ShmTransport, SingleRankWaitsUntilItsDeadlineOrAbort) {
  runThreads(1, [&](int, Bootstrap& b) {
    auto t = createShmTransport(b, smallConfig());
    ASSERT_TRUE(t.isOk()) << t.status().message();
    auto start = Clock::now();
    EXPECT_TRUE((*t)->waitForActivity(Deadline::in(0.05), 10000).isOk());
    EXPECT_GE(secondsSince(start), 0.04);
    (*t)->abort(Status(braidInternalError, "done"));
    EXPECT_EQ((*t)->waitForActivity(Deadline::in(5), 10000).code(), braidRemoteError);
  });
}

TEST(ShmTransport, AbortReachesPeersAsRemoteErrorNamingTheAborter) {
  runThreads(3, [&](int rank, Bootstrap& b) {
    auto t = createShmTransport(b, smallConfig());
    ASSERT_TRUE(t.isOk()) << t.status().message();
    uint8_t buf[64];
    std::vector<Request> reqs(1);
    ASSERT_TRUE((*t)->connector(rank == 2 ? 0 : 2)->postRecv({buf}, 64, &reqs[0]).isOk());
    auto start = Clock::now();
    if (rank == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      (*t)->abort(Status(braidInternalError, "out of disk"));
      (*t)->abort(Status(braidInternalError, "second reason"));  // idempotent
    }
    // A long maxWaitMs: only the doorbell can end the sleep early.
    Status s = drive(**t, rank, 3, reqs, /*maxWaitMs=*/10000);
    EXPECT_LT(secondsSince(start), 2.0);
    EXPECT_EQ(s.code(), braidRemoteError);
    EXPECT_EQ(s.peer(), 2);
    EXPECT_NE(s.message().find("out of disk"), std::string::npos) << s.message();
    ASSERT_TRUE(b.barrier().isOk());
  });
}

TEST(ShmTransport, AbortFromAnotherThreadWakesASleepingWait) {
  runThreads(2, [&](int rank, Bootstrap& b) {
    auto t = createShmTransport(b, smallConfig());
    ASSERT_TRUE(t.isOk()) << t.status().message();
    auto start = Clock::now();
    if (rank == 0) {
      std::thread aborter([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        (*t)->abort(Status(braidInternalError, "user abort"));
      });
      Status s = (*t)->waitForActivity(Deadline::in(20), 10000);
      aborter.join();
      EXPECT_EQ(s.code(), braidRemoteError);
      EXPECT_NE(s.message().find("this rank (0) aborted"), std::string::npos) << s.message();
    } else {
      uint8_t buf[8];
      std::vector<Request> reqs(1);
      ASSERT_TRUE((*t)->connector(0)->postRecv({buf}, 8, &reqs[0]).isOk());
      Status s = drive(**t, 1, 2, reqs, 10000);
      EXPECT_EQ(s.peer(), 0);
      EXPECT_NE(s.message().find("user abort"), std::string::npos) << s.message();
    }
    EXPECT_LT(secondsSince(start), 2.0);
    ASSERT_TRUE(b.barrier().isOk());
  });
}

TEST(ShmTransport, PeerClosingWhileAwaitedIsRemoteError) {
  runThreads(2, [&](int rank, Bootstrap& b) {
    auto t = createShmTransport(b, smallConfig());
    ASSERT_TRUE(t.isOk()) << t.status().message();
    if (rank == 1) {
      t->reset();  // closes without sending what rank 0 waits for
      return;
    }
    uint8_t buf[8];
    std::vector<Request> reqs(1);
    ASSERT_TRUE((*t)->connector(1)->postRecv({buf}, 8, &reqs[0]).isOk());
    Status s = drive(**t, 0, 2, reqs, 10000);
    EXPECT_EQ(s.code(), braidRemoteError);
    EXPECT_EQ(s.peer(), 1);
  });
}

// ---- Ranks in forked processes ------------------------------------------

// Rank 0 (the test process) is the hub; rank r > 0 talks to it over fds[r].
class ForkBootstrap : public Bootstrap {
 public:
  ForkBootstrap(int rank, int nranks, std::string tag, std::vector<int> fds)
      : rank_(rank), nranks_(nranks), tag_(std::move(tag)), fds_(std::move(fds)) {}
  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  const std::string& commTag() const override { return tag_; }
  const uint8_t* secret() const override { return secret_; }
  std::array<uint8_t, 32> deriveKey(std::string_view) const override { return {}; }  // no TLS
  double timeoutSeconds() const override { return 20; }
  Status barrier() override {
    std::vector<uint8_t> flags(nranks_);
    return allGather(flags.data(), 1);
  }
  Status allGather(void* data, size_t bytes) override {
    auto* p = static_cast<uint8_t*>(data);
    if (rank_ != 0) {
      BRAID_RETURN_IF_ERROR(io(fds_[rank_], p + rank_ * bytes, bytes, true));
      return io(fds_[rank_], p, nranks_ * bytes, false);
    }
    for (int r = 1; r < nranks_; ++r) {
      BRAID_RETURN_IF_ERROR(io(fds_[r], p + r * bytes, bytes, false));
    }
    for (int r = 1; r < nranks_; ++r) BRAID_RETURN_IF_ERROR(io(fds_[r], p, nranks_ * bytes, true));
    return Status::ok();
  }

 private:
  static Status io(int fd, uint8_t* p, size_t n, bool write) {
    while (n > 0) {
      pollfd pfd{fd, static_cast<short>(write ? POLLOUT : POLLIN), 0};
      if (poll(&pfd, 1, 20000) <= 0) return timeoutError("fork bootstrap: peer silent");
      ssize_t k = write ? ::send(fd, p, n, MSG_NOSIGNAL) : ::read(fd, p, n);
      if (k <= 0) return remoteError("fork bootstrap: peer gone", -1);
      p += k;
      n -= static_cast<size_t>(k);
    }
    return Status::ok();
  }
  const int rank_, nranks_;
  const std::string tag_;
  const std::vector<int> fds_;
  uint8_t secret_[16] = {};
};

// Forks ranks 1..nranks-1 running `child` (its return value is the exit code);
// returns rank 0's bootstrap and the children's pids.
std::unique_ptr<Bootstrap> forkRanks(int nranks, const std::function<int(Bootstrap&)>& child,
                                     std::vector<pid_t>* pids) {
  std::string tag = "f" + std::to_string(getpid()) + "x" +
                    std::to_string(Clock::now().time_since_epoch().count() % 100000);
  std::vector<int> hubEnds(nranks, -1), rankEnds(nranks, -1);
  for (int r = 1; r < nranks; ++r) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return nullptr;
    hubEnds[r] = sv[0];
    rankEnds[r] = sv[1];
  }
  for (int r = 1; r < nranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      alarm(30);                          // never outlive a broken test
      for (int q = 1; q < nranks; ++q) {  // keep only its own end: EOF when rank 0 is gone
        close(hubEnds[q]);
        if (q != r) close(rankEnds[q]);
      }
      std::vector<int> fds(nranks, -1);
      fds[r] = rankEnds[r];
      ForkBootstrap bootstrap(r, nranks, tag, fds);
      _exit(child(bootstrap));
    }
    pids->push_back(pid);
  }
  for (int r = 1; r < nranks; ++r) close(rankEnds[r]);
  return std::make_unique<ForkBootstrap>(0, nranks, tag, hubEnds);
}

int exitCodeOf(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Ping-pong between processes, 8 B many times (every round trip sleeps and
// wakes across processes), then 0 B and 1 MiB + 3. Returns 0 or a failure code.
int pingPongRank(Bootstrap& b) {
  auto t = createShmTransport(b, smallConfig());
  if (!t.isOk()) return 10;
  if (!b.barrier().isOk()) return 11;
  const int rank = b.rank();
  if (rank == 0 && !shmEntries(b.commTag()).empty()) return 12;
  Connector* c = (*t)->connector(1 - rank);
  for (size_t size : {size_t{8}, size_t{0}, size_t{(1 << 20) + 3}}) {
    for (int iter = 0; iter < (size == 8 ? 300 : 3); ++iter) {
      std::vector<uint8_t> msg = pattern(0, 1, iter, size), got(size);
      for (int leg = 0; leg < 2; ++leg) {
        bool sending = (leg == 0) == (rank == 0);
        std::vector<Request> reqs(1);
        Status s = sending ? c->postSend(msg.data(), size, &reqs[0])
                           : c->postRecv({got.data()}, size, &reqs[0]);
        // A long maxWaitMs: a lost wake-up would stall the test for seconds.
        if (s.isOk()) s = drive(**t, rank, 2, reqs, /*maxWaitMs=*/10000);
        if (!s.isOk()) {
          fprintf(stderr, "rank %d: %s\n", rank, s.message().c_str());
          return 13;
        }
        if (!sending && got != msg) return 14;
      }
    }
  }
  return b.barrier().isOk() ? 0 : 15;
}

TEST(ShmTransportProcesses, PingPongAcrossProcessesLeavesNoSegment) {
  std::vector<pid_t> pids;
  auto b = forkRanks(2, pingPongRank, &pids);
  ASSERT_NE(b, nullptr);
  auto start = Clock::now();
  EXPECT_EQ(pingPongRank(*b), 0);
  EXPECT_EQ(exitCodeOf(pids[0]), 0);
  EXPECT_LT(secondsSince(start), 5.0);
  EXPECT_TRUE(shmEntries(b->commTag()).empty());
}

// Rank 2 starts sending 1 MiB to ranks 0 and 1 and dies once its first
// fragments are out; the others must fail with an error naming it, promptly.
int crashScenarioRank(Bootstrap& b) {
  auto t = createShmTransport(b, smallConfig());
  if (!t.isOk()) return 10;
  const int rank = b.rank();
  const size_t bytes = 1 << 20;
  std::vector<uint8_t> buf(bytes, 7);
  std::vector<Request> reqs(rank == 2 ? 2 : 1);
  if (rank == 2) {
    for (int peer = 0; peer < 2; ++peer) {
      bool moved;
      if (!(*t)->connector(peer)->postSend(buf.data(), bytes, &reqs[peer]).isOk()) return 11;
      if (!(*t)->connector(peer)->progress(&moved).isOk() || !moved) return 12;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    _exit(3);  // a crash: no destructor, no close
  }
  if (!(*t)->connector(2)->postRecv({buf.data()}, bytes, &reqs[0]).isOk()) return 13;
  auto start = Clock::now();
  Status s = drive(**t, rank, 3, reqs, /*maxWaitMs=*/10000);
  double elapsed = secondsSince(start);
  bool named = s.message().find("rank 2 (pid") != std::string::npos &&
               s.message().find("died") != std::string::npos;
  if (s.code() != braidRemoteError || s.peer() != 2 || !named) {
    fprintf(stderr, "rank %d: unexpected status %d: %s\n", rank, s.code(), s.message().c_str());
    return 20;
  }
  if (reqs[0].completed == 0 || reqs[0].done) return 21;  // died mid-transfer, not before
  if (elapsed > 1.5) return 22;
  return 0;
}

TEST(ShmTransportProcesses, CrashedPeerIsRemoteErrorWithinASecond) {
  // smallConfig() keeps the two-copy stream (a single-copy 1 MiB could be read
  // in full before the crash); shm_single_copy_test covers that case.
  std::vector<pid_t> pids;
  auto b = forkRanks(3, crashScenarioRank, &pids);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(crashScenarioRank(*b), 0);  // the crashed rank's parent (sees a zombie)
  EXPECT_EQ(exitCodeOf(pids[0]), 0);    // its sibling
  EXPECT_EQ(exitCodeOf(pids[1]), 3);
  EXPECT_TRUE(shmEntries(b->commTag()).empty());
}

}  // namespace
}  // namespace braid::transport
