#include "comm/handle_table.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "comm/comm.h"
#include "core/log.h"

namespace braid {

// A communicator created after its handle (publishPending).
struct PendingJoin {
  JoinFn join;
  std::mutex joinMu;   // guards thread (taken before mu, never inside the thread)
  std::thread thread;  // started by startJoin; joined by joinThread
  std::mutex mu;       // guards started, done, status; the thread takes it as it ends
  bool started = false;
  bool done = false;
  Status status;
};

// One communicator's place in the table. `word` is (generation << 1) | live. A live slot
// with a null comm is pending: its join has not succeeded (yet).
struct HandleSlot {
  std::atomic<uint64_t> word{0};
  std::atomic<int> leases{0};
  std::atomic<Comm*> comm{nullptr};
  std::shared_ptr<PendingJoin> pending;  // written while the slot is not live, then read-only
};

namespace {

// Token layout: generation (32 bits) | index (24 bits) | tag (8 bits). The tag is odd, so a
// token is never an aligned pointer, and a pointer mistaken for a handle fails the check.
constexpr uint64_t kTag = 0xB5;
constexpr int kChunkBits = 10;
constexpr uint32_t kChunkSlots = 1u << kChunkBits;
constexpr uint32_t kChunks = 1u << (24 - kChunkBits);  // 16M slots at most

class HandleTable {
 public:
  HandleSlot* slot(uint32_t index) const {
    if (index >= kChunkSlots * kChunks) return nullptr;
    HandleSlot* chunk = chunks_[index >> kChunkBits].load(std::memory_order_acquire);
    return chunk == nullptr ? nullptr : &chunk[index & (kChunkSlots - 1)];
  }

  // A free slot (reused first) and its index, or null when 16M communicators are live.
  HandleSlot* take(uint32_t* index) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      *index = free_.back();
      free_.pop_back();
      return slot(*index);
    }
    if (used_ == kChunkSlots * kChunks) return nullptr;
    *index = used_++;
    if ((*index & (kChunkSlots - 1)) == 0) {
      // Never freed: a token of any age may still be checked against it.
      chunks_[*index >> kChunkBits].store(new HandleSlot[kChunkSlots], std::memory_order_release);
    }
    return slot(*index);
  }

  void giveBack(uint32_t index) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(index);
  }

 private:
  std::atomic<HandleSlot*> chunks_[kChunks] = {};
  std::mutex mu_;  // guards free_ and used_
  std::vector<uint32_t> free_;
  uint32_t used_ = 0;
};

// table() and decode() are inlined: every call on a communicator decodes its handle.
[[gnu::always_inline]] inline HandleTable& table() {
  static auto* t = new HandleTable;  // never destroyed: handles outlive static destructors
  return *t;
}

struct Decoded {
  HandleSlot* slot = nullptr;
  uint64_t liveWord = 0;  // the slot's word while this token's communicator is live
};

[[gnu::always_inline]] inline Decoded decode(braidComm_t handle) {
  const auto token = reinterpret_cast<uintptr_t>(handle);
  Decoded d;
  if ((token & 0xFF) != kTag) return d;
  const uint32_t generation = static_cast<uint32_t>(static_cast<uint64_t>(token) >> 32);
  d.slot = table().slot(static_cast<uint32_t>((token >> 8) & 0xFFFFFF));
  d.liveWord = (uint64_t(generation) << 1) | 1;
  return d;
}

std::string describe(braidComm_t handle) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", static_cast<void*>(handle));
  return text;
}

// Waits until no call is inside `comm`; false when `seconds` pass first.
bool waitUntilIdle(const HandleSlot& slot, const Comm& comm, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (slot.leases.load() > 0 || comm.inFlight() > 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

namespace {

braidComm_t publish(Comm* comm, std::shared_ptr<PendingJoin> pending) {
  uint32_t index = 0;
  HandleSlot* slot = table().take(&index);
  if (slot == nullptr) return nullptr;  // 16M live communicators: the caller reports it
  // The next generation (0 is skipped, so a token is never all zero above the tag).
  uint64_t generation = (slot->word.load() >> 1) + 1;
  if ((generation & 0xFFFFFFFF) == 0) generation = 1;
  slot->comm.store(comm, std::memory_order_relaxed);
  slot->pending = std::move(pending);
  slot->word.store((generation << 1) | 1);  // publishes comm (sequentially consistent)
  const uintptr_t token = (uintptr_t(generation) << 32) | (uintptr_t(index) << 8) | kTag;
  return reinterpret_cast<braidComm_t>(token);
}

// Waits for `pending`'s thread, if one was started (any number of callers).
void joinThread(PendingJoin& pending) {
  std::lock_guard<std::mutex> lock(pending.joinMu);
  if (pending.thread.joinable()) pending.thread.join();
}

// Runs fn(slot) while counted in the slot, if `handle` is live (as a Lease does, so that
// releaseComm does not reset the slot under fn); false when it is not.
template <typename Fn>
bool withLiveSlot(braidComm_t handle, Fn&& fn) {
  const Decoded d = decode(handle);
  if (d.slot == nullptr) return false;
  d.slot->leases.fetch_add(1);
  const bool live = d.slot->word.load() == d.liveWord;
  if (live) fn(*d.slot);
  d.slot->leases.fetch_sub(1);
  return live;
}

// The pending join of a live handle, or null.
std::shared_ptr<PendingJoin> pendingOf(braidComm_t handle) {
  std::shared_ptr<PendingJoin> pending;
  withLiveSlot(handle, [&](HandleSlot& slot) { pending = slot.pending; });
  return pending;
}

}  // namespace

braidComm_t publishComm(std::unique_ptr<Comm> comm) {
  if (comm == nullptr) return nullptr;
  Comm* raw = comm.get();
  braidComm_t handle = publish(raw, nullptr);
  if (handle != nullptr) comm.release();
  return handle;
}

braidComm_t publishPending(JoinFn join) {
  auto pending = std::make_shared<PendingJoin>();
  pending->join = std::move(join);
  return publish(nullptr, std::move(pending));
}

Status startJoin(braidComm_t handle) {
  std::shared_ptr<PendingJoin> pending = pendingOf(handle);
  if (pending == nullptr) return Status::ok();
  std::lock_guard<std::mutex> joinLock(pending->joinMu);
  std::lock_guard<std::mutex> lock(pending->mu);
  if (pending->started) return Status::ok();
  HandleSlot* slot = decode(handle).slot;  // live (pendingOf): stays allocated in any case
  try {
    pending->thread = std::thread([pending, slot] {
      Result<std::unique_ptr<Comm>> comm = pending->join();
      std::lock_guard<std::mutex> lock(pending->mu);
      if (comm.isOk()) {
        slot->comm.store(comm->release(), std::memory_order_release);
      } else {
        pending->status = comm.status();
      }
      pending->done = true;
    });
  } catch (const std::system_error& e) {
    pending->status =
        Status(braidSystemError, std::string("cannot start the init thread: ") + e.what());
    pending->done = true;
  }
  pending->started = true;
  return Status::ok();
}

void abandonJoin(braidComm_t handle, const Status& why) {
  std::shared_ptr<PendingJoin> pending = pendingOf(handle);
  if (pending == nullptr) return;
  std::lock_guard<std::mutex> lock(pending->mu);
  if (pending->started) return;
  pending->status = why;
  pending->started = pending->done = true;
}

Status waitJoin(braidComm_t handle) {
  std::shared_ptr<PendingJoin> pending = pendingOf(handle);
  if (pending == nullptr) return Status::ok();
  joinThread(*pending);
  std::lock_guard<std::mutex> lock(pending->mu);
  return pending->status;
}

Status initState(braidComm_t handle, const char* api) {
  bool ready = false;
  std::shared_ptr<PendingJoin> pending;
  const bool live = withLiveSlot(handle, [&](HandleSlot& slot) {
    ready = slot.comm.load(std::memory_order_acquire) != nullptr;
    pending = slot.pending;
  });
  if (!live) {
    if (handle == nullptr) return invalidArgument(std::string(api) + ": comm is NULL");
    return invalidArgument(std::string(api) + ": comm " + describe(handle) +
                           " is not a live communicator (already destroyed or aborted, or "
                           "never returned by an init call)");
  }
  if (ready || pending == nullptr) return Status::ok();
  std::lock_guard<std::mutex> lock(pending->mu);
  if (!pending->done) return Status(braidInProgress, std::string(api) + ": still initializing");
  if (!pending->status.isOk()) return pending->status;
  return Status::ok();
}

Lease::Lease(braidComm_t handle) : handle_(handle) {
  const Decoded d = decode(handle);
  if (d.slot == nullptr) return;
  d.slot->leases.fetch_add(1);
  if (d.slot->word.load() != d.liveWord) {
    d.slot->leases.fetch_sub(1);
    return;
  }
  comm_ = d.slot->comm.load(std::memory_order_acquire);
  if (comm_ == nullptr) {  // pending: nothing to hold
    d.slot->leases.fetch_sub(1);
    pending_ = true;
    return;
  }
  slot_ = d.slot;
}

Lease::~Lease() {
  if (slot_ != nullptr) slot_->leases.fetch_sub(1);
}

Status Lease::error(const char* api) const {
  if (handle_ == nullptr) return invalidArgument(std::string(api) + ": comm is NULL");
  if (pending_) {
    const Status state = initState(handle_, api);
    if (!state.isOk() && state.code() != braidInProgress) {
      return invalidUsage(std::string(api) + ": comm's initialization failed (" + state.message() +
                          ")");
    }
    return invalidUsage(std::string(api) +
                        ": comm is still initializing (a non-blocking init, or an init inside a "
                        "group that has not ended): wait until braidCommGetAsyncError answers "
                        "braidSuccess");
  }
  return invalidArgument(std::string(api) + ": comm " + describe(handle_) +
                         " is not a live communicator (already destroyed or aborted, or "
                         "never returned by an init call)");
}

Comm* peekComm(braidComm_t handle) {
  const Decoded d = decode(handle);
  if (d.slot == nullptr || d.slot->word.load() != d.liveWord) return nullptr;
  return d.slot->comm.load(std::memory_order_acquire);
}

Status releaseComm(braidComm_t handle, const char* api, Release how) {
  if (handle == nullptr) return Status::ok();
  const Decoded d = decode(handle);
  uint64_t expected = d.liveWord;
  // One caller wins the live bit: a second destroy (or a destroy racing an abort) loses.
  if (d.slot == nullptr || !d.slot->word.compare_exchange_strong(expected, d.liveWord & ~1ull)) {
    return Lease(handle).error(api);
  }
  // A join still running finishes first (bounded by BRAID_TIMEOUT); one never started
  // (a group that did not end) is dropped.
  if (std::shared_ptr<PendingJoin> pending = d.slot->pending) {
    joinThread(*pending);
    // Readers of `pending` (withLiveSlot) leave within moments: the word is no longer live.
    while (d.slot->comm.load() == nullptr && d.slot->leases.load() > 0) std::this_thread::yield();
  }
  Comm* comm = d.slot->comm.load(std::memory_order_acquire);
  if (comm == nullptr) {  // a join that failed or never ran: nothing to free
    d.slot->pending = nullptr;
    table().giveBack(static_cast<uint32_t>((reinterpret_cast<uintptr_t>(handle) >> 8) & 0xFFFFFF));
    return Status::ok();
  }
  // Calls inside notice an abort within one wait slice; a plain destroy lets them run out
  // their own deadline first.
  const double grace = comm->config().timeoutSeconds + 5.0;
  if (how == Release::kAbort) comm->requestAbort();
  bool idle = waitUntilIdle(*d.slot, *comm, grace);
  if (!idle && how == Release::kWait) {
    comm->requestAbort();
    idle = waitUntilIdle(*d.slot, *comm, 5.0);
  }
  if (!idle) {
    // Freeing it would pull the communicator from under a call: leak it (and its slot).
    BRAID_WARN(
        "%s: a call is still inside rank %d's communicator after %.0f s; it is left "
        "allocated",
        api, comm->rank(), grace);
    return Status::ok();
  }
  d.slot->comm.store(nullptr, std::memory_order_relaxed);
  d.slot->pending = nullptr;
  delete comm;  // with its device side (comm/device_side.h): proxy stopped, group released
  table().giveBack(static_cast<uint32_t>((reinterpret_cast<uintptr_t>(handle) >> 8) & 0xFFFFFF));
  return Status::ok();
}

}  // namespace braid
