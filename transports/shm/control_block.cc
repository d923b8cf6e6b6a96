#include "transports/shm/control_block.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>

#include "transports/failure_report.h"

namespace braid::transport::shm {
namespace {

// Not FUTEX_PRIVATE_FLAG: the word lives in memory shared between processes.
long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

}  // namespace

void futexWait(std::atomic<uint32_t>* word, uint32_t expected, int timeoutMs) {
  if (timeoutMs <= 0) return;
  timespec timeout{timeoutMs / 1000, static_cast<long>(timeoutMs % 1000) * 1000000L};
  // EAGAIN (value already changed), EINTR and ETIMEDOUT all mean "re-poll".
  futex(word, FUTEX_WAIT, expected, &timeout);
}

void ring(ControlBlock& block) {
  block.doorbell.fetch_add(1, std::memory_order_seq_cst);
  futex(&block.doorbell, FUTEX_WAKE, INT_MAX, nullptr);
}

void ringIfSleeping(ControlBlock& block) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (block.sleepers.load(std::memory_order_relaxed) != 0) ring(block);
}

void postAbort(ControlBlock& block, int rank, int origin, const std::string& reason) {
  int32_t none = -1;
  if (block.abortRank.compare_exchange_strong(none, rank, std::memory_order_acq_rel)) {
    size_t n = std::min(reason.size(), kAbortReasonBytes - 1);
    std::memcpy(block.abortReason, reason.data(), n);
    block.abortReason[n] = '\0';
    block.originRank = origin;
    block.reasonReady.store(1, std::memory_order_release);
  }
}

Status abortStatus(const ControlBlock& block, int selfRank) {
  int rank = block.abortRank.load(std::memory_order_acquire);
  if (rank < 0) return Status::ok();
  std::string reason = "no reason given";
  int origin = rank;
  // The aborting rank may still be writing its reason (it claimed abortRank
  // first): give it a moment, so the origin it names is not lost. A rank
  // that died mid-write leaves no reason; then the aborting rank is blamed.
  const auto giveUp = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  while (block.reasonReady.load(std::memory_order_acquire) == 0 &&
         std::chrono::steady_clock::now() < giveUp) {
    sched_yield();
  }
  if (block.reasonReady.load(std::memory_order_acquire) != 0) {
    reason.assign(block.abortReason, strnlen(block.abortReason, kAbortReasonBytes));
    origin = block.originRank;
  }
  std::string who = rank == selfRank ? "this rank (" + std::to_string(rank) + ")"
                                     : "rank " + std::to_string(rank);
  if (origin == rank) {
    return relayedFailure("shm: ", rank, reason, rank,
                          who + " aborted the communicator: " + reason);
  }
  // Name the rank at fault first: the aborting rank only passes the news on.
  std::string culprit = origin == selfRank ? "this rank (" + std::to_string(origin) + ")"
                                           : "rank " + std::to_string(origin);
  return relayedFailure(
      "shm: ", rank, reason, origin,
      culprit + " failed " + kReportedByMarker + std::to_string(rank) + "): " + reason);
}

}  // namespace braid::transport::shm
