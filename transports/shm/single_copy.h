// Single-copy ("rendezvous") transfers of large shm messages.
//
// A small message is copied twice: into a FIFO slot by the sender, out of it
// by the receiver. For a message of at least the single-copy threshold the
// sender instead publishes, in one slot header, where the message lies in its
// own address space; the receiver reads it straight into the destination
// with process_vm_readv (Linux cross-memory attach, CMA) — or with memcpy when
// both ranks are threads of one process — and frees the slot only after the
// last byte is read. The sender's request completes once the slot is freed.
//
// CMA needs ptrace-attach permission, which yama (ptrace_scope >= 1), seccomp
// or containers often deny. So at setup every rank probes every peer (reads a
// known pattern at an address the peer published) and single copy is used
// between two ranks only if both can read each other; both ends then agree on
// the framing without further exchange. Otherwise the two-copy path is used.
// This code does not call prctl(PR_SET_PTRACER): that would open this process
// to ptrace by every process of the user, a security cost a library should not
// take silently. Under yama scope 1 single copy is therefore off.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace braid::transport::shm {

// Single copy is off unless BRAID_SHM_SINGLE_COPY_BYTES (Config::shmSingleCopyBytes)
// is set: on the 2-core VM where it was measured, process_vm_readv copies at
// ~7 GB/s against ~12 GB/s for memcpy, and the two-copy pipeline overlaps its
// copies on two cores, so single copy lost every collective (0.35-0.85x at
// 1-64 MiB, 2 and 4 ranks). Hosts with fast CMA may differ; 262144 is a
// sensible opt-in.

/// Where a peer's memory is and how to reach it.
struct PeerMemory {
  int rank = -1;
  int pid = 0;
  bool sameProcess = false;  // ranks on threads: plain memory access, no system call
};

/// What every rank publishes at setup so that peers can probe it.
struct ProbeTarget {
  uint64_t address = 0;  // of two uint64_t holding probePattern(pid, rank)
  int32_t pid = 0;
  int32_t rank = -1;
};

/// The two words a rank exposes for probing.
void fillProbePattern(uint64_t pattern[2], int pid, int rank);

/// Whether this process can read `target`'s probe pattern (always true for
/// this very process). False when single copy is forced off for tests
/// (BRAID_SHM_TEST_NO_CMA=1) or CMA is denied or unavailable.
bool canReadPeer(const ProbeTarget& target);

/// Reads exactly `bytes` at `address` in `peer` into `dst`. A failure (the peer
/// died: ESRCH; bad address: EFAULT; ...) is a braidRemoteError naming the peer.
Status readPeerMemory(const PeerMemory& peer, uint64_t address, void* dst, size_t bytes);

}  // namespace braid::transport::shm
