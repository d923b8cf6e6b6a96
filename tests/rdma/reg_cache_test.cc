// The registration cache (transports/ibverbs/reg_cache.h) against a fake verbs
// table and fake page frames: hits, a remapped region dropped and registered
// afresh, a region in use kept until released, LRU eviction, and no caching
// where frames cannot be read. No RDMA device needed.
#include "transports/ibverbs/reg_cache.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <memory>
#include <vector>

namespace braid::transport::ib {
namespace {

// The fake device: every registration is an ibv_mr of our own; counts what is live.
struct FakeVerbs {
  static inline int live = 0;
  static inline int registered = 0;
  static inline bool refuse = false;
  static ibv_mr* regMr(ibv_pd*, void* addr, size_t length, int) {
    if (refuse) {
      errno = EFAULT;
      return nullptr;
    }
    auto* mr = new ibv_mr{};
    mr->addr = addr;
    mr->length = length;
    mr->lkey = mr->rkey = static_cast<uint32_t>(++registered);
    ++live;
    return mr;
  }
  static int deregMr(ibv_mr* mr) {
    delete mr;
    --live;
    return 0;
  }
  static VerbsApi api() {
    VerbsApi a;
    a.regMr = &regMr;
    a.deregMr = &deregMr;
    return a;
  }
};

// Frames by page; a page not in the map is "not present" (0).
class FakeFrames final : public FrameSource {
 public:
  uint64_t frame(uintptr_t address) override {
    auto it = frames.find(address & ~uintptr_t{4095});
    return it == frames.end() ? (identity ? (address >> 12) + 1 : 0) : it->second;
  }
  bool usable() override { return canRead; }
  std::map<uintptr_t, uint64_t> frames;  // overrides
  bool identity = true;                  // pages not overridden: frame = page number + 1
  bool canRead = true;
};

class RegCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeVerbs::live = FakeVerbs::registered = 0;
    FakeVerbs::refuse = false;
    api_ = FakeVerbs::api();
    cache_ = std::make_unique<RegCache>(api_, nullptr, 0, &frames_);
  }
  void TearDown() override {
    cache_.reset();
    EXPECT_EQ(FakeVerbs::live, 0) << "a registration outlived the cache";
  }
  static void* at(uintptr_t a) { return reinterpret_cast<void*>(a); }
  VerbsApi api_;
  FakeFrames frames_;
  std::unique_ptr<RegCache> cache_;
};

TEST_F(RegCacheTest, SecondUseOfARegionIsAHit) {
  auto a = cache_->acquire(at(0x100000), 3 << 20);
  ASSERT_TRUE(a.isOk());
  cache_->release(*a);
  auto b = cache_->acquire(at(0x100000 + 4096 + 13), 1 << 20);  // inside the first region
  ASSERT_TRUE(b.isOk());
  EXPECT_EQ(b->mr, a->mr);
  cache_->release(*b);
  EXPECT_EQ(cache_->registrations(), 1u);
  EXPECT_EQ(cache_->hits(), 1u);
}

TEST_F(RegCacheTest, RegistersThePagesAroundAnUnalignedBuffer) {
  auto a = cache_->acquire(at(0x100000 + 100), 5000);
  ASSERT_TRUE(a.isOk());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a->mr->addr), 0x100000u);
  EXPECT_EQ(a->mr->length, 8192u);  // bytes 100..5099 touch two pages
  cache_->release(*a);
}

TEST_F(RegCacheTest, RemappedRegionIsRegisteredAfresh) {
  auto a = cache_->acquire(at(0x200000), 1 << 20);
  ASSERT_TRUE(a.isOk());
  ibv_mr* old = a->mr;
  cache_->release(*a);
  // munmap + mmap at the same address: the last page now has another frame.
  frames_.frames[0x200000 + (1 << 20) - 4096] = 999999;
  auto b = cache_->acquire(at(0x200000), 1 << 20);
  ASSERT_TRUE(b.isOk());
  EXPECT_EQ(cache_->staleDrops(), 1u);
  EXPECT_EQ(cache_->registrations(), 2u);
  EXPECT_EQ(FakeVerbs::live, 1) << "the stale registration must be gone";
  EXPECT_NE(b->mr->lkey, 1u);
  (void)old;
  cache_->release(*b);
}

TEST_F(RegCacheTest, UnmappedPageIsStale) {
  auto a = cache_->acquire(at(0x300000), 64 << 10);
  ASSERT_TRUE(a.isOk());
  cache_->release(*a);
  frames_.frames[0x300000] = 0;  // first page no longer present
  auto b = cache_->acquire(at(0x300000), 64 << 10);
  ASSERT_TRUE(b.isOk());
  EXPECT_EQ(cache_->staleDrops(), 1u);
  cache_->release(*b);
}

TEST_F(RegCacheTest, StaleRegionInUseLivesUntilReleased) {
  auto a = cache_->acquire(at(0x400000), 1 << 20);
  ASSERT_TRUE(a.isOk());
  frames_.frames[0x400000] = 12345;
  auto b = cache_->acquire(at(0x400000), 1 << 20);  // a still uses the old one
  ASSERT_TRUE(b.isOk());
  EXPECT_NE(a->mr, b->mr);
  EXPECT_EQ(FakeVerbs::live, 2);
  cache_->release(*a);
  EXPECT_EQ(FakeVerbs::live, 1) << "released stale registration must be deregistered";
  cache_->release(*b);
  EXPECT_EQ(FakeVerbs::live, 1) << "the fresh one stays cached";
}

TEST_F(RegCacheTest, EvictsLeastRecentlyUsedIdleEntries) {
  const size_t n = RegCache::kMaxEntries + 5;
  for (size_t i = 0; i < n; ++i) {
    auto h = cache_->acquire(at(0x10000000 + i * 0x100000), 4096);
    ASSERT_TRUE(h.isOk());
    cache_->release(*h);
  }
  EXPECT_LE(cache_->entries(), RegCache::kMaxEntries);
  EXPECT_EQ(static_cast<size_t>(FakeVerbs::live), cache_->entries());
  // The newest is still cached; the oldest was evicted.
  auto newest = cache_->acquire(at(0x10000000 + (n - 1) * 0x100000), 4096);
  ASSERT_TRUE(newest.isOk());
  EXPECT_EQ(cache_->hits(), 1u);
  cache_->release(*newest);
  auto oldest = cache_->acquire(at(0x10000000), 4096);
  ASSERT_TRUE(oldest.isOk());
  EXPECT_EQ(cache_->hits(), 1u);
  cache_->release(*oldest);
}

TEST_F(RegCacheTest, NothingKeptWhenFramesCannotBeRead) {
  frames_.canRead = false;
  auto a = cache_->acquire(at(0x500000), 1 << 20);
  ASSERT_TRUE(a.isOk());
  EXPECT_EQ(FakeVerbs::live, 1);
  cache_->release(*a);
  EXPECT_EQ(FakeVerbs::live, 0) << "uncached registration must go with its transfer";
  auto b = cache_->acquire(at(0x500000), 1 << 20);
  ASSERT_TRUE(b.isOk());
  EXPECT_EQ(cache_->hits(), 0u);
  cache_->release(*b);
}

TEST_F(RegCacheTest, RefusedRegistrationIsAnErrorWithErrno) {
  FakeVerbs::refuse = true;
  auto a = cache_->acquire(at(0x600000), 4096);
  ASSERT_FALSE(a.isOk());
  EXPECT_NE(a.status().message().find("ibv_reg_mr"), std::string::npos);
  EXPECT_NE(a.status().message().find("Bad address"), std::string::npos);
}

}  // namespace
}  // namespace braid::transport::ib
