// The control block at the start of every rank's shared-memory segment.
//
// It holds what peers need to signal its owner, all of it in lock-free atomics
// placed in the mapping, so it works between processes and between threads:
//
//  - doorbell / sleepers: the owner sleeps on `doorbell` (a non-private futex).
//    A waker that published work first issues a seq_cst fence and then rings
//    only when `sleepers` is non-zero, so a busy owner costs no system call.
//    The owner reads `doorbell`, raises `sleepers`, fences, re-checks for work
//    and only then sleeps on the value it read; whichever side moves second
//    sees the other (Dekker), so no wake-up is lost.
//  - abort: the first rank to abort claims `abortRank` with a CAS, writes its
//    reason and the rank it blames (`originRank`: itself, or the peer whose
//    failure made it abort), then sets `reasonReady`. Later aborts keep the
//    first reason.
//  - closed: the owner destroyed its transport cleanly (peers can tell a
//    clean exit from a crash).
//  - waitsFor: the rank the owner last waited BRAID_TIMEOUT for (-1: none),
//    read by peers that time out to follow the chain of waits to the rank
//    that stalled.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace braid::transport::shm {

inline constexpr uint32_t kSegmentMagic = 0x62726431;  // "brd1"
inline constexpr size_t kCacheLine = 64;
inline constexpr size_t kAbortReasonBytes = 240;

static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(std::atomic<int32_t>::is_always_lock_free);
static_assert(std::atomic<uint64_t>::is_always_lock_free);

struct ControlBlock {
  // Written once by the owner before any peer maps the segment.
  uint32_t magic = kSegmentMagic;
  int32_t ownerRank = -1;
  int32_t ownerPid = 0;

  // Own cache line: touched on every sleep and every wake.
  alignas(kCacheLine) std::atomic<uint32_t> doorbell{0};
  std::atomic<uint32_t> sleepers{0};

  alignas(kCacheLine) std::atomic<int32_t> abortRank{-1};
  std::atomic<uint32_t> reasonReady{0};
  std::atomic<uint32_t> closed{0};
  std::atomic<int32_t> waitsFor{-1};
  int32_t originRank = -1;  // valid once reasonReady is set
  char abortReason[kAbortReasonBytes] = {};
};

/// Bumps the doorbell and wakes every sleeper, unconditionally (abort, close).
void ring(ControlBlock& block);

/// Wakes the owner of `block` only if it sleeps (or is about to). Call after
/// publishing work (a slot's sequence or the head); the fence inside orders that store
/// before the check of `sleepers`.
void ringIfSleeping(ControlBlock& block);

/// Sleeps on the owner's doorbell for at most `timeoutMs`, unless `hasWork()`
/// is true after announcing the sleep. Safe against lost wake-ups (see top).
template <typename HasWork>
void sleepUnlessWork(ControlBlock& own, HasWork&& hasWork, int timeoutMs);

/// Records that `rank` aborted with `reason`, blaming rank `origin` (the rank
/// whose failure it reacts to, or `rank` itself), unless a rank already did.
void postAbort(ControlBlock& block, int rank, int origin, const std::string& reason);

/// The error a rank reports once its control block carries an abort; ok
/// otherwise. It names, and blames (Status::peer), the origin rank.
Status abortStatus(const ControlBlock& block, int selfRank);

/// Whether `block` carries an abort (cheap: one relaxed load).
inline bool isAborted(const ControlBlock& block) {
  return block.abortRank.load(std::memory_order_relaxed) >= 0;
}

// ---- implementation of the template ------------------------------------

/// Waits while *word == expected, at most timeoutMs (spurious returns allowed).
void futexWait(std::atomic<uint32_t>* word, uint32_t expected, int timeoutMs);

template <typename HasWork>
void sleepUnlessWork(ControlBlock& own, HasWork&& hasWork, int timeoutMs) {
  uint32_t seen = own.doorbell.load(std::memory_order_acquire);
  own.sleepers.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!hasWork()) futexWait(&own.doorbell, seen, timeoutMs);
  own.sleepers.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace braid::transport::shm
