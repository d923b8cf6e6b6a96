// The few memory-ordering operations the FIFO protocols need, behind one small interface.
//
// Simple protocol: the producer fills a slot, then publishes a counter with release
// semantics; the consumer reads the counter with acquire semantics, then the slot. On the
// device the block first meets at a barrier (so every thread's slot writes happen before the
// leader's), then the leader fences at system scope (peers may be other GPUs or the host)
// and stores; on the host the compiler's __atomic builtins (what std::atomic_ref is made of,
// usable from nvcc's C++17 host pass too) give the same release/acquire pairing.
//
// LL protocol: no fences at all. Each 8-byte word carries its own flag and is written and
// read as one single-copy-atomic access (volatile 64-bit access on the device, a relaxed
// __atomic access on the host), so a reader that sees the flag sees the data beside it.
#pragma once

#include <cstdint>

#include "collectives/device/portability.h"

namespace braid::device {

/// Load of a counter another agent publishes; later reads see what it published before.
BRAID_HD uint64_t loadAcquire(const uint64_t* p) {
#if BRAID_ON_DEVICE
  const uint64_t v = *reinterpret_cast<const volatile uint64_t*>(p);
  __threadfence_system();
  return v;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

/// Publishes a counter: the calling thread's earlier writes (and, after a group barrier, the
/// whole group's) are visible to whoever acquires the new value.
BRAID_HD void storeRelease(uint64_t* p, uint64_t v) {
#if BRAID_ON_DEVICE
  __threadfence_system();
  *reinterpret_cast<volatile uint64_t*>(p) = v;
#else
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

/// One single-copy-atomic 8-byte read with no ordering (an LL word).
BRAID_HD uint64_t loadWordRelaxed(const uint64_t* p) {
#if BRAID_ON_DEVICE
  return *reinterpret_cast<const volatile uint64_t*>(p);
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

/// One single-copy-atomic 8-byte write with no ordering (an LL word).
BRAID_HD void storeWordRelaxed(uint64_t* p, uint64_t v) {
#if BRAID_ON_DEVICE
  *reinterpret_cast<volatile uint64_t*>(p) = v;
#else
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
#endif
}

/// Two LL words side by side (a 16-byte LL line): one 16-byte access on the device, whose
/// 8-byte halves are each single-copy atomic; two word accesses on the host.
BRAID_HD void loadPairRelaxed(const uint64_t* p, uint64_t* a, uint64_t* b) {
#if BRAID_ON_DEVICE
  unsigned long long x, y;
  asm volatile("ld.volatile.v2.u64 {%0, %1}, [%2];" : "=l"(x), "=l"(y) : "l"(p) : "memory");
  *a = x;
  *b = y;
#else
  *a = loadWordRelaxed(p);
  *b = loadWordRelaxed(p + 1);
#endif
}

BRAID_HD void storePairRelaxed(uint64_t* p, uint64_t a, uint64_t b) {
#if BRAID_ON_DEVICE
  asm volatile("st.volatile.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
#else
  storeWordRelaxed(p, a);
  storeWordRelaxed(p + 1, b);
#endif
}

}  // namespace braid::device
