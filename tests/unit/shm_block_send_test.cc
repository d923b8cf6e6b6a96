// Tests of all-to-all block sends on shm (Connector::postBlockSend): which go single-copy
// under the default rule (single_copy.h: only where the host's ranks outnumber its CPUs,
// blocks from kBlockSingleCopyBytes, buffers below the streaming-store threshold), that a
// forced or disabled single copy and a failed CMA probe override it, and that the blocks
// arrive intact either way. Ranks are threads; the CPU count comes from the test hook
// BRAID_SHM_TEST_CPUS so that the rule does not depend on the machine the test runs on.
//
// Whether a send went single-copy is observed from outside, as in shm_single_copy_test: the
// FIFO holds 256 KiB, so a two-copy send of a block that fits is done at once, while a
// single-copy send stays pending until the receiver has read it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "support/drive_requests.h"
#include "support/local_bootstrap.h"
#include "support/spawn.h"
#include "transports/shm/shm_transport.h"
#include "transports/shm/single_copy.h"

namespace braid::transport {
namespace {

using braid::testing::LocalBootstrapGroup;
using braid::testing::ScopedEnv;

constexpr size_t kStreamStoreBytes = 1 << 20;  // the rule's buffer limit in these tests
constexpr size_t kBlock = shm::kBlockSingleCopyBytes;

Config testConfig() {
  auto fromEnv = Config::fromEnv();
  Config config = fromEnv.isOk() ? *fromEnv : Config{};
  config.shmSlotBytes = 4096;
  config.shmSlots = 64;  // 256 KiB: a two-copy send of kBlock completes at once
  config.streamStoreBytes = kStreamStoreBytes;
  return config;
}

// One send from rank 0 to rank 1: a block from a buffer `extent` bytes long, or (extent 0)
// a plain postSend.
struct SendCase {
  const char* name;
  size_t bytes;
  size_t extent;
  bool singleCopyWhenOversubscribed;  // what the default rule does with it
};

const SendCase kCases[] = {
    {"block below the buffer limit", kBlock, kStreamStoreBytes / 2, true},
    {"large block below the buffer limit", 3 * kBlock + 8, kStreamStoreBytes - 1, true},
    {"block at the buffer limit", kBlock, kStreamStoreBytes, false},
    {"block below the size floor", kBlock - 64, kStreamStoreBytes / 2, false},
    {"plain send", kBlock, 0, false},
};

uint8_t patternByte(size_t seq, size_t i) {
  return static_cast<uint8_t>(seq * 29 + i * 7 + (i >> 8));
}

int fail(const char* what, const SendCase& c, const Status& s = Status::ok()) {
  fprintf(stderr, "%s (%s) %s\n", what, c.name, s.message().c_str());
  return 1;
}

// Progresses the connector to `peer` until `req` is done.
Status drive(Transport& t, int peer, const Request& req) {
  return braid::testing::driveRequests(t, {peer}, {&req}, 30);
}

// Rank 0 sends, progresses a few times and notes whether the send is done; rank 1 posts its
// receive only after a barrier. Returns 0 when the send went single-copy exactly when
// `expectSingleCopy` and the bytes arrived intact.
int runCase(Bootstrap& b, Transport& t, const SendCase& c, size_t seq, bool expectSingleCopy) {
  const int rank = b.rank();
  std::vector<uint8_t> buf(std::max(c.bytes, size_t{1}));
  if (rank == 0) {
    for (size_t i = 0; i < c.bytes; ++i) buf[i] = patternByte(seq, i);
  }
  Request req;
  bool doneEarly = false;
  if (rank == 0) {
    Connector* to = t.connector(1);
    Status posted = c.extent == 0 ? to->postSend(buf.data(), c.bytes, &req)
                                  : to->postBlockSend(buf.data(), c.bytes, c.extent, &req);
    if (!posted.isOk()) return fail("post send", c, posted);
    for (int i = 0; i < 3; ++i) {
      bool moved = false;
      if (!to->progress(&moved).isOk()) return fail("progress", c);
    }
    doneEarly = req.done;
  }
  if (!b.barrier().isOk()) return fail("barrier", c);
  if (rank == 1) {
    Status posted = t.connector(0)->postRecv({buf.data()}, c.bytes, &req);
    if (!posted.isOk()) return fail("post recv", c, posted);
  }
  Status s = drive(t, 1 - rank, req);
  if (!s.isOk()) return fail("drive", c, s);
  if (rank == 1) {
    for (size_t i = 0; i < c.bytes; ++i) {
      if (buf[i] != patternByte(seq, i)) return fail("data differs", c);
    }
  }
  if (rank == 0 && doneEarly == expectSingleCopy) {
    return fail(expectSingleCopy ? "expected single copy" : "expected two copies", c);
  }
  return b.barrier().isOk() ? 0 : fail("final barrier", c);
}

// Every case on one transport of two thread ranks; `oversubscribedRule` says whether the
// default rule's single copy is expected to apply.
void runCases(bool oversubscribedRule) {
  LocalBootstrapGroup group(2, 30);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      auto bootstrap = group.forRank(r);
      auto t = createShmTransport(*bootstrap, testConfig());
      ASSERT_TRUE(t.isOk()) << t.status().message();
      size_t seq = 0;
      for (const SendCase& c : kCases) {
        const bool expect = oversubscribedRule && c.singleCopyWhenOversubscribed;
        EXPECT_EQ(runCase(*bootstrap, **t, c, seq++, expect), 0) << "rank " << r << ": " << c.name;
      }
    });
  }
  for (auto& t : threads) t.join();
}

TEST(ShmBlockSend, OversubscribedHostReadsBlocksInPlace) {
  ScopedEnv env("BRAID_SHM_TEST_CPUS", "1");  // two ranks, one CPU
  runCases(true);
}

TEST(ShmBlockSend, CpuPerRankKeepsTwoCopies) {
  ScopedEnv env("BRAID_SHM_TEST_CPUS", "2");
  runCases(false);
}

TEST(ShmBlockSend, DisabledSingleCopyOrFailedProbeKeepsTwoCopies) {
  ScopedEnv cpus("BRAID_SHM_TEST_CPUS", "1");
  {
    ScopedEnv off("BRAID_SHM_SINGLE_COPY_BYTES", "0");
    runCases(false);
  }
  ScopedEnv noCma("BRAID_SHM_TEST_NO_CMA", "1");
  runCases(false);
}

TEST(ShmBlockSend, RuleNeedsDefaultThresholdAndMoreRanksThanCpus) {
  const size_t kAuto = Config::kAutoBytes;
  EXPECT_EQ(shm::blockSingleCopyExtentBelow(kAuto, 4, 2, 8 << 20), size_t{8} << 20);
  EXPECT_EQ(shm::blockSingleCopyExtentBelow(kAuto, 3, 2, 8 << 20), size_t{8} << 20);
  EXPECT_EQ(shm::blockSingleCopyExtentBelow(kAuto, 2, 2, 8 << 20), 0u);
  EXPECT_EQ(shm::blockSingleCopyExtentBelow(kAuto, 4, 0, 8 << 20), 0u);
  // A forced threshold covers every send itself; 0 turns single copy off.
  EXPECT_EQ(shm::blockSingleCopyExtentBelow(65536, 4, 2, 8 << 20), 0u);
  EXPECT_EQ(shm::blockSingleCopyExtentBelow(0, 4, 2, 8 << 20), 0u);
}

TEST(ShmBlockSend, CpuCountTestHook) {
  {
    ScopedEnv env("BRAID_SHM_TEST_CPUS", "3");
    EXPECT_EQ(shm::hostCpuCount(0), 3);
    EXPECT_EQ(shm::hostCpuCount(5), 3);  // the hook wins over the ranks' masks
  }
  ScopedEnv unset("BRAID_SHM_TEST_CPUS", "");
  EXPECT_EQ(shm::hostCpuCount(5), 5);  // the ranks' masks, not the machine's CPUs
  EXPECT_GE(shm::hostCpuCount(0), 1);
}

}  // namespace
}  // namespace braid::transport
