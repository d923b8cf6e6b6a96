#include "transports/shm/copy_pace.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace braid::transport::shm {
namespace {

constexpr size_t kReferenceBytes = size_t{64} << 10;

// Copies a private 64 KiB buffer a few times and keeps the fastest (the first warms the
// caches and the pages; a preemption only slows one down). 0 without a counter. The buffers
// are the thread's, kept for the recalibrations.
double timeReferenceCopy() {
  if (CopyPace::now() == 0) return 0;
  thread_local std::vector<uint8_t> from(kReferenceBytes, 1), to(kReferenceBytes, 0);
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 8; ++i) {
    const uint64_t start = CopyPace::now();
    std::memcpy(to.data(), from.data(), kReferenceBytes);
    // Keeps the copy from being dropped: its result is read.
    asm volatile("" : : "r"(to.data()) : "memory");
    best = std::min(best, CopyPace::now() - start);
  }
  return static_cast<double>(std::max<uint64_t>(best, 1));
}

int forcedVerdict() {
  const char* forced = std::getenv("BRAID_SHM_TEST_PACE");
  if (forced == nullptr) return 0;
  if (std::strcmp(forced, "far") == 0) return 1;
  if (std::strcmp(forced, "near") == 0) return -1;
  return 0;
}

}  // namespace

CopyPace::CopyPace() : referenceTicks_(timeReferenceCopy()), forced_(forcedVerdict()) {}

uint64_t CopyPace::now() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return 0;
#endif
}

void CopyPace::recordFragment(size_t bytes, uint64_t ticks) {
  if (bytes < kTimedBytes || ticks == 0 || referenceTicks_ <= 0) return;
  unitBytes_ += bytes;
  unitTicks_ += ticks;
  if (unitBytes_ >= kUnitBytes) judgeUnit();
}

void CopyPace::judgeUnit() {
  const double pace = static_cast<double>(unitTicks_) * static_cast<double>(kReferenceBytes) /
                      static_cast<double>(unitBytes_);
  if (messagePace_ == 0 || pace < messagePace_) messagePace_ = pace;
  unitBytes_ = 0;
  unitTicks_ = 0;
}

void CopyPace::endMessage() {
  if (unitBytes_ != 0) judgeUnit();  // a message's last, partial unit
  if (messagePace_ == 0) return;
  const bool slow = messagePace_ > kFarRatio * referenceTicks_;
  messagePace_ = 0;
  slowMessages_ = slow ? slowMessages_ + 1 : 0;
  far_ = slowMessages_ >= kFarMessages;
  if (!fixed_ && ++timedMessages_ % kRecalibrateEvery == 0) {
    referenceTicks_ = std::min(referenceTicks_, timeReferenceCopy());
  }
}

}  // namespace braid::transport::shm
