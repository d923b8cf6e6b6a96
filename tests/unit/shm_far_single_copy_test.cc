// Tests of the default single-copy rule's far-placement exception (shm_connector.h,
// copy_pace.h): while a link counts as far, plain sends of at least
// CopyPace::kFarSingleCopyBytes go single-copy from ordinary pages; near, or below that size,
// or with single copy turned off, they take the FIFO; the bytes arrive intact either way.
// The verdict comes from the test hook BRAID_SHM_TEST_PACE (the measured one depends on the
// host's placement). Whether a send went single-copy is observed as in shm_block_send_test:
// the FIFO holds 256 KiB, so a two-copy send is done at once, a single-copy one only once the
// receiver has read it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "support/drive_requests.h"
#include "support/local_bootstrap.h"
#include "support/spawn.h"
#include "transports/shm/copy_pace.h"
#include "transports/shm/shm_transport.h"

namespace braid::transport {
namespace {

using braid::testing::LocalBootstrapGroup;
using braid::testing::ScopedEnv;

constexpr size_t kFar = shm::CopyPace::kFarSingleCopyBytes;

Config testConfig() {
  auto fromEnv = Config::fromEnv();
  Config config = fromEnv.isOk() ? *fromEnv : Config{};
  config.shmSlotBytes = 4096;
  config.shmSlots = 64;  // 256 KiB: every two-copy send below completes at once
  return config;
}

uint8_t patternByte(size_t seq, size_t i) {
  return static_cast<uint8_t>(seq * 31 + i * 5 + (i >> 9));
}

Status drive(Transport& t, int peer, const Request& req) {
  return braid::testing::driveRequests(t, {peer}, {&req}, 30);
}

// Rank 0 sends `bytes` and progresses a few times before rank 1 posts its receive; returns
// "" when the send went single-copy exactly when `expectSingleCopy` and arrived intact.
std::string runCase(Bootstrap& b, Transport& t, size_t bytes, size_t seq, bool expectSingleCopy) {
  const int rank = b.rank();
  std::vector<uint8_t> buf(bytes);
  if (rank == 0) {
    for (size_t i = 0; i < bytes; ++i) buf[i] = patternByte(seq, i);
  }
  Request req;
  bool doneEarly = false;
  if (rank == 0) {
    Connector* to = t.connector(1);
    if (!to->postSend(buf.data(), bytes, &req).isOk()) return "post send";
    for (int i = 0; i < 3; ++i) {
      bool moved = false;
      if (!to->progress(&moved).isOk()) return "progress";
    }
    doneEarly = req.done;
  }
  if (!b.barrier().isOk()) return "barrier";
  if (rank == 1 && !t.connector(0)->postRecv({buf.data()}, bytes, &req).isOk()) {
    return "post recv";
  }
  Status s = drive(t, 1 - rank, req);
  if (!s.isOk()) return "drive: " + s.message();
  if (rank == 1) {
    for (size_t i = 0; i < bytes; ++i) {
      if (buf[i] != patternByte(seq, i)) return "data differs at byte " + std::to_string(i);
    }
  }
  if (rank == 0 && doneEarly == expectSingleCopy) {
    return expectSingleCopy ? "expected single copy" : "expected two copies";
  }
  return b.barrier().isOk() ? "" : "final barrier";
}

// Sends each of `sizes` from rank 0 to rank 1 on a fresh transport of two thread ranks;
// `singleCopyFrom` is the smallest size expected to go single-copy (0: none).
void runSizes(const std::vector<size_t>& sizes, size_t singleCopyFrom) {
  LocalBootstrapGroup group(2, 30);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      auto bootstrap = group.forRank(r);
      auto t = createShmTransport(*bootstrap, testConfig());
      ASSERT_TRUE(t.isOk()) << t.status().message();
      size_t seq = 0;
      for (size_t bytes : sizes) {
        const bool expect = singleCopyFrom != 0 && bytes >= singleCopyFrom;
        EXPECT_EQ(runCase(*bootstrap, **t, bytes, seq++, expect), "")
            << "rank " << r << ", " << bytes << " bytes";
      }
    });
  }
  for (auto& t : threads) t.join();
}

const std::vector<size_t> kSizes = {kFar - 64, kFar, 3 * kFar + 8, 200000};

TEST(ShmFarSingleCopy, FarLinkReadsMidSizeSendsInPlace) {
  ScopedEnv env("BRAID_SHM_TEST_PACE", "far");
  runSizes(kSizes, kFar);
}

TEST(ShmFarSingleCopy, NearLinkKeepsTwoCopies) {
  ScopedEnv env("BRAID_SHM_TEST_PACE", "near");
  runSizes(kSizes, 0);
}

TEST(ShmFarSingleCopy, DisabledOrForcedSingleCopyOverridesTheVerdict) {
  ScopedEnv far("BRAID_SHM_TEST_PACE", "far");
  {
    ScopedEnv off("BRAID_SHM_SINGLE_COPY_BYTES", "0");
    runSizes(kSizes, 0);
  }
  {
    ScopedEnv forced("BRAID_SHM_SINGLE_COPY_BYTES", "150000");  // a user's threshold rules
    runSizes(kSizes, 150000);
  }
  ScopedEnv noCma("BRAID_SHM_TEST_NO_CMA", "1");
  runSizes(kSizes, 0);
}

}  // namespace
}  // namespace braid::transport
