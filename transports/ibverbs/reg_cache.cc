// Registration cache (see reg_cache.h for why hits are checked against page frames).
#include "transports/ibverbs/reg_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace braid::transport::ib {
namespace {

constexpr uintptr_t kPage = 4096;
// Pages sampled per region besides its first and last: enough to catch a remapped
// part of a large buffer in practice, few enough that a hit costs a few reads.
constexpr size_t kInnerSamples = 6;

}  // namespace

PagemapFrames::PagemapFrames() { fd_ = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC); }

PagemapFrames::~PagemapFrames() {
  if (fd_ >= 0) ::close(fd_);
}

uint64_t PagemapFrames::frame(uintptr_t address) {
  if (fd_ < 0) return 0;
  uint64_t entry = 0;
  const off_t at = static_cast<off_t>(address / kPage * sizeof entry);
  if (::pread(fd_, &entry, sizeof entry, at) != static_cast<ssize_t>(sizeof entry)) return 0;
  const bool present = (entry >> 63) & 1;
  return present ? (entry & ((uint64_t{1} << 55) - 1)) : 0;
}

bool PagemapFrames::usable() {
  if (usable_ < 0) {
    // A page of our own stack is present; its frame reads as 0 without CAP_SYS_ADMIN.
    volatile char probe = 1;
    usable_ = frame(reinterpret_cast<uintptr_t>(&probe)) != 0 ? 1 : 0;
  }
  return usable_ == 1;
}

RegCache::RegCache(const VerbsApi& api, ibv_pd* pd, int access, FrameSource* frames)
    : api_(api), pd_(pd), access_(access), frames_(frames != nullptr ? frames : &ownFrames_) {}

RegCache::~RegCache() {
  for (Entry& e : entries_) api_.deregMr(e.mr);
}

bool RegCache::stillMapped(const Entry& e) {
  for (const auto& [page, frame] : e.frames) {
    if (frames_->frame(page) != frame) return false;
  }
  return true;
}

Result<RegCache::Handle> RegCache::acquire(const void* addr, size_t bytes) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t begin = a & ~(kPage - 1);
  const uintptr_t end = (a + bytes + kPage - 1) & ~(kPage - 1);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->stale || !it->cached || it->begin > begin || it->end < end) continue;
    if (!stillMapped(*it)) {
      ++staleDrops_;
      drop(it);
      break;  // registers afresh below; at most one entry can have covered the range
    }
    ++hits_;
    ++it->users;
    entries_.splice(entries_.begin(), entries_, it);
    return Handle{it->mr, &*it};
  }
  const bool cache = frames_->usable();
  if (cache) evictIdle(end - begin);
  ibv_mr* mr = api_.regMr(pd_, reinterpret_cast<void*>(begin), end - begin, access_);
  if (mr == nullptr) {
    const int err = errno;
    return systemError(
        "ibv_reg_mr of " + std::to_string(end - begin) + " bytes at " + std::to_string(begin), err);
  }
  ++registrations_;
  Entry e;
  e.begin = begin;
  e.end = end;
  e.mr = mr;
  e.users = 1;
  e.cached = cache;
  if (cache) {
    // Frames are read after registration: the pages are pinned now and cannot move.
    const size_t pages = (end - begin) / kPage;
    const size_t step = std::max<size_t>(1, pages / (kInnerSamples + 1));
    for (size_t p = 0; p < pages; p += step) {
      e.frames.emplace_back(begin + p * kPage, frames_->frame(begin + p * kPage));
    }
    e.frames.emplace_back(end - kPage, frames_->frame(end - kPage));
    pinnedBytes_ += end - begin;
  }
  entries_.push_front(std::move(e));
  return Handle{mr, &entries_.front()};
}

void RegCache::release(const Handle& handle) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (&*it != handle.entry) continue;
    if (--it->users == 0 && (it->stale || !it->cached)) drop(it);
    return;
  }
}

void RegCache::drop(std::list<Entry>::iterator it) {
  if (it->users > 0) {
    it->stale = true;  // a transfer still uses it; its release deregisters it
    return;
  }
  if (it->cached) pinnedBytes_ -= it->end - it->begin;
  api_.deregMr(it->mr);
  entries_.erase(it);
}

void RegCache::evictIdle(size_t incomingBytes) {
  auto over = [&] {
    return entries_.size() >= kMaxEntries || pinnedBytes_ + incomingBytes > kMaxPinnedBytes;
  };
  // Least recently used first: from the back.
  auto it = entries_.end();
  while (over() && it != entries_.begin()) {
    --it;
    if (it->users != 0) continue;
    auto victim = it++;  // it: the entry after the victim, already visited
    drop(victim);
  }
}

}  // namespace braid::transport::ib
