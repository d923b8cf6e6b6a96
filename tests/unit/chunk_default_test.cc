// The pipelining chunk (Config::chunkBytes): BRAID_CHUNK_BYTES when given,
// else Config::defaultChunkBytes of the agreed transport — 512 KiB over
// sockets, 4 MiB over ib, 1 MiB over shared memory and mixed. Checked on the parsed Config
// and on live communicators (threads), whose chunk is what schedules are
// built with; a 2 MiB all-reduce over sockets still matches the reference.
#include <gtest/gtest.h>

#include <vector>

#include "api/guard.h"
#include "comm/comm.h"
#include "core/config.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

Comm& commOf(braidComm_t handle) { return *api::toComm(handle); }

TEST(ChunkDefault, FollowsTheTransportUnlessSet) {
  EXPECT_EQ(Config::defaultChunkBytes("socket"), size_t{512} << 10);
  EXPECT_EQ(Config::defaultChunkBytes("shm"), size_t{1} << 20);
  EXPECT_EQ(Config::defaultChunkBytes("mixed"), size_t{1} << 20);
  EXPECT_EQ(Config::defaultChunkBytes("ib"), size_t{4} << 20);
  EXPECT_EQ(Config::defaultChunkBytes(""), size_t{1} << 20);
  {
    ScopedEnv env("BRAID_CHUNK_BYTES", "");
    Result<Config> config = Config::fromEnv();
    ASSERT_TRUE(config.isOk()) << config.status().message();
    EXPECT_FALSE(config->chunkBytesSet);
  }
  {
    ScopedEnv env("BRAID_CHUNK_BYTES", "1M");
    Result<Config> config = Config::fromEnv();
    ASSERT_TRUE(config.isOk()) << config.status().message();
    EXPECT_TRUE(config->chunkBytesSet);
    EXPECT_EQ(config->chunkBytes, size_t{1} << 20);
  }
}

// The chunk every rank of a fresh 2-rank communicator ends up with.
std::vector<size_t> chunksOf(const SpawnOptions& options) {
  std::vector<size_t> chunks(2, 0);
  spawn(
      2, [&](braidComm_t comm, int rank) { chunks[rank] = commOf(comm).config().chunkBytes; },
      options);
  return chunks;
}

TEST(ChunkDefault, CommunicatorsTakeTheTransportsChunk) {
  ScopedEnv unset("BRAID_CHUNK_BYTES", "");
  EXPECT_EQ(chunksOf(SpawnOptions::withTransport("socket")),
            (std::vector<size_t>{512 << 10, 512 << 10}));
  EXPECT_EQ(chunksOf(SpawnOptions::withTransport("shm")), (std::vector<size_t>{1 << 20, 1 << 20}));
  EXPECT_EQ(chunksOf(SpawnOptions::withTransport("socket").set("BRAID_CHUNK_BYTES", "1M")),
            (std::vector<size_t>{1 << 20, 1 << 20}));
}

TEST(ChunkDefault, SocketAllReduceOfSeveralChunksMatchesTheReference) {
  ScopedEnv unset("BRAID_CHUNK_BYTES", "");
  constexpr size_t kCount = (2 << 20) / sizeof(float) + 3;  // 2 MiB and a bit: 5 chunks
  spawn(
      2,
      [&](braidComm_t comm, int rank) {
        std::vector<float> in(kCount), out(kCount, -1.0f);
        for (size_t i = 0; i < kCount; ++i) in[i] = static_cast<float>((i * 7 + rank) % 1000);
        const braidResult_t r =
            braidAllReduce(in.data(), out.data(), kCount, braidFloat32, braidSum, comm, nullptr);
        if (r != braidSuccess) {
          ADD_FAILURE() << "rank " << rank << ": " << braidGetErrorString(r);
          return;
        }
        for (size_t i = 0; i < kCount; ++i) {
          const float want = static_cast<float>((i * 7) % 1000 + (i * 7 + 1) % 1000);
          if (out[i] != want) {
            ADD_FAILURE() << "rank " << rank << " element " << i << ": " << out[i]
                          << " != " << want;
            return;
          }
        }
      },
      SpawnOptions::withTransport("socket"));
}

}  // namespace
}  // namespace braid::testing
