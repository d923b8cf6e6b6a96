// Memory registration cache: user buffers are pinned and registered once and
// reused by later calls on the same memory.
//
// The danger of any such cache: a buffer freed with munmap and a new mapping
// at the same address (glibc's malloc does exactly that for large blocks)
// leave the cached registration pointing at the OLD pages, still pinned, so an
// RDMA write would land where the program no longer looks. Each hit is
// therefore checked against the page frames recorded at registration time
// (/proc/self/pagemap; pinned pages never move): the first and last page and
// a few between. A mismatch, or a page no longer present, drops the entry
// (deregistering it once no transfer uses it) and registers afresh. Where the
// frames cannot be read (an unprivileged process sees them as 0) nothing is
// kept: each transfer registers and deregisters its own region, which is
// always right, only slower.
//
// Bounded: at most kMaxEntries regions and kMaxPinnedBytes pinned; the least
// recently used idle entry goes first.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <vector>

#include "core/status.h"
#include "transports/ibverbs/verbs_api.h"

namespace braid::transport::ib {

/// Reads page frame numbers of this process (PagemapReader::frame); tests substitute a fake.
class FrameSource {
 public:
  virtual ~FrameSource() = default;
  /// The physical frame of the page holding `address`, 0 when not present or unreadable.
  virtual uint64_t frame(uintptr_t address) = 0;
  /// False when frames read as 0 for present pages (no privilege): nothing can be cached.
  virtual bool usable() = 0;
};

/// /proc/self/pagemap.
class PagemapFrames final : public FrameSource {
 public:
  PagemapFrames();
  ~PagemapFrames() override;
  uint64_t frame(uintptr_t address) override;
  bool usable() override;

 private:
  int fd_ = -1;
  int usable_ = -1;  // -1: not probed yet
};

class RegCache {
 public:
  static constexpr size_t kMaxEntries = 64;
  static constexpr size_t kMaxPinnedBytes = size_t{4} << 30;

  /// One registration handed out; release it when the transfer using it is done.
  struct Handle {
    ibv_mr* mr = nullptr;
    void* entry = nullptr;  // the cache's bookkeeping, opaque
  };

  /// `frames`: null for /proc/self/pagemap. `access`: the ibv_access_flags every region gets.
  RegCache(const VerbsApi& api, ibv_pd* pd, int access, FrameSource* frames = nullptr);
  ~RegCache();
  RegCache(const RegCache&) = delete;
  RegCache& operator=(const RegCache&) = delete;

  /// A registration covering [addr, addr + bytes), bytes > 0. An error (with errno's
  /// text) when the memory cannot be registered: the caller stages through its own buffers.
  Result<Handle> acquire(const void* addr, size_t bytes);
  void release(const Handle& handle);

  /// For tests: regions registered so far, hits, and entries dropped as stale.
  size_t registrations() const { return registrations_; }
  size_t hits() const { return hits_; }
  size_t staleDrops() const { return staleDrops_; }
  size_t entries() const { return entries_.size(); }

 private:
  struct Entry {
    uintptr_t begin = 0, end = 0;  // page-aligned
    ibv_mr* mr = nullptr;
    std::vector<std::pair<uintptr_t, uint64_t>> frames;  // sampled pages and their frames
    int users = 0;
    bool stale = false;  // out of the lookup; deregistered when users drops to 0
    bool cached = true;  // false: deregistered on its last release (no frames to check)
  };
  bool stillMapped(const Entry& e);
  void evictIdle(size_t incomingBytes);
  void drop(std::list<Entry>::iterator it);

  const VerbsApi& api_;
  ibv_pd* const pd_;  // the transport's, outlives this cache
  const int access_;
  PagemapFrames ownFrames_;
  FrameSource* frames_;
  std::list<Entry> entries_;  // most recently used first; stale ones stay until idle
  size_t pinnedBytes_ = 0;
  size_t registrations_ = 0, hits_ = 0, staleDrops_ = 0;
};

}  // namespace braid::transport::ib
