// Placement of rank processes that fill or outnumber their CPUs (core_spreading.h):
// one decision per process at communicator creation, then a per-thread pin or
// release before each call, made only when the call's class changes.
#include "comm/core_spreading.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/log.h"

namespace braid {
namespace {

// This process's placement, decided once by the first communicator. `cpu`
// is published last (release), so a thread that reads it >= 0 also sees
// `mode` and `own`.
struct Placement {
  std::atomic<bool> decided{false};
  std::atomic<int> cpu{-1};  // the CPU to pin to; -1: leave the affinity alone
  BindMode mode = BindMode::kNone;
  bool ownCore = false;  // no other local rank was given the same CPU
  cpu_set_t own;         // the affinity to give back for calls that run unpinned
};

// Inlined: every call reads it on its way to the first message.
[[gnu::always_inline]] inline Placement& placement() {
  static Placement p;
  return p;
}

// How the calling thread is placed now: as the application left it until braid
// pins it, then pinned or given back the affinity it had before. Per thread:
// affinity is per thread, and a thread braid never pinned is never touched.
enum class ThreadPlace { kUnknown, kPinned, kOwn };
thread_local ThreadPlace threadPlace = ThreadPlace::kUnknown;
thread_local int smallRun = 0;     // pinsNextCall's count of consecutive small calls
thread_local cpu_set_t threadOwn;  // this thread's affinity before braid first pinned it

// Gives a pinned thread back the affinity it had before braid pinned it. A
// failed release leaves the thread pinned, which still works.
void releaseThread() {
  if (threadPlace == ThreadPlace::kPinned) {
    (void)sched_setaffinity(0, sizeof(threadOwn), &threadOwn);
  }
  threadPlace = ThreadPlace::kOwn;
}

bool pinTo(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof(one), &one) == 0;
}

}  // namespace

Status readBindMode(BindMode* mode) {
  const char* v = std::getenv("BRAID_BIND");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "auto") == 0) {
    *mode = BindMode::kAuto;
  } else if (std::strcmp(v, "spread") == 0) {
    *mode = BindMode::kSpread;
  } else if (std::strcmp(v, "none") == 0) {
    *mode = BindMode::kNone;
  } else {
    return invalidArgument(std::string("BRAID_BIND='") + v +
                           "': expected 'auto', 'spread' or 'none'");
  }
  return Status::ok();
}

int spreadCpu(const int* allowedCpus, int cpuCount, int localIndex, int localRanks) {
  if (cpuCount < 1 || localRanks < 2 || localRanks < cpuCount || localIndex < 0 ||
      localIndex >= localRanks) {
    return -1;
  }
  return allowedCpus[localIndex % cpuCount];
}

Status spreadOverCores(int localIndex, int localRanks, int* pinnedCpu) {
  *pinnedCpu = -1;
  BindMode mode = BindMode::kAuto;
  BRAID_RETURN_IF_ERROR(readBindMode(&mode));
  Placement& p = placement();
  if (mode == BindMode::kNone || p.decided.exchange(true)) return Status::ok();
  CPU_ZERO(&p.own);
  if (sched_getaffinity(0, sizeof(p.own), &p.own) != 0) return Status::ok();
  std::vector<int> allowed;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &p.own)) allowed.push_back(c);
  }
  const int cpu =
      spreadCpu(allowed.data(), static_cast<int>(allowed.size()), localIndex, localRanks);
  if (cpu < 0) return Status::ok();
  p.mode = mode;
  p.ownCore = localRanks <= static_cast<int>(allowed.size());
  p.cpu.store(cpu, std::memory_order_release);
  BRAID_INFO("local rank %d of %d on %zu CPUs: CPU %d for %s (BRAID_BIND=%s)", localIndex,
             localRanks, allowed.size(), cpu,
             mode == BindMode::kSpread ? "every call"
             : p.ownCore               ? "runs of calls up to 2 MiB"
                                       : "runs of calls up to 8 KiB",
             mode == BindMode::kSpread ? "spread" : "auto");
  if (mode != BindMode::kSpread) return Status::ok();
  threadOwn = p.own;  // what releaseThread gives back if placement is given up
  if (!pinTo(cpu)) {
    BRAID_WARN(
        "local rank %d of %d: cannot pin to CPU %d; ranks keep sharing cores as the "
        "scheduler places them",
        localIndex, localRanks, cpu);
    p.cpu.store(-1, std::memory_order_release);
    return Status::ok();
  }
  threadPlace = ThreadPlace::kPinned;
  *pinnedCpu = cpu;
  return Status::ok();
}

void placeForCall(size_t callBytes) {
  Placement& p = placement();
  const int cpu = p.cpu.load(std::memory_order_acquire);
  if (cpu < 0) {
    // Placement was given up (another thread could not pin): let go here too.
    if (threadPlace == ThreadPlace::kPinned) releaseThread();
    return;
  }
  const bool pin = pinsNextCall(
      p.mode, callBytes, p.ownCore ? kOwnCorePinnedCallMaxBytes : kPinnedCallMaxBytes, &smallRun);
  if (!pin) {
    if (threadPlace == ThreadPlace::kPinned) releaseThread();
    return;
  }
  if (threadPlace == ThreadPlace::kPinned) return;
  CPU_ZERO(&threadOwn);
  if (sched_getaffinity(0, sizeof(threadOwn), &threadOwn) != 0 || !pinTo(cpu)) {
    // Not allowed (e.g. a changed cpuset): stop placing for the whole process
    // rather than retry per call; the scheduler places the ranks as before.
    p.cpu.store(-1, std::memory_order_release);
    threadPlace = ThreadPlace::kOwn;
    return;
  }
  threadPlace = ThreadPlace::kPinned;
}

cpu_set_t usableCpus() {
  Placement& p = placement();
  if (p.cpu.load(std::memory_order_acquire) >= 0) return p.own;
  cpu_set_t now;
  CPU_ZERO(&now);
  if (sched_getaffinity(0, sizeof(now), &now) != 0) CPU_ZERO(&now);
  return now;
}

bool pinnedToOwnCore() {
  return threadPlace == ThreadPlace::kPinned &&
         placement().cpu.load(std::memory_order_acquire) >= 0 && placement().ownCore;
}

}  // namespace braid
