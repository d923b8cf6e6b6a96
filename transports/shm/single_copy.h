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

#include "core/config.h"
#include "core/status.h"

namespace braid::transport::shm {

// When single copy pays (BRAID_SHM_SINGLE_COPY_BYTES, Config::shmSingleCopyBytes):
// process_vm_readv pins the sender's pages one at a time, so from 4 KiB pages
// it copies well below memcpy's speed and single copy loses to the two-copy
// pipeline (whose copy-in and copy-out overlap on two cores), while from huge
// pages it copies near memcpy's speed and wins (perf/RESULTS.md, "Single copy
// on shm"). So by default (variable unset)
// a message of at least kAutoSingleCopyBytes goes single-copy only when
// HugePageScanner::mostlyHuge() says so for the sender's buffer; a number N forces single
// copy for every message of at least N bytes (hosts with fast CMA); 0 turns it off.
constexpr size_t kAutoSingleCopyBytes = 256 << 10;

// All-to-all blocks (Connector::postBlockSend) of at least kBlockSingleCopyBytes go
// single-copy under the default rule from 4 KiB pages too, when the host's ranks outnumber
// its CPUs: then every hand-over of a FIFO slot needs both ranks on a CPU at once, so a rank
// waits for a descheduled peer at nearly every slot, while a single-copy block costs the peer
// one read whenever it runs. With a CPU per rank the FIFO pipeline does not wait, and its two
// memcpy beat one CMA read from 4 KiB pages (which pins each page in turn). Only from buffers
// below the rank's share of the last-level cache (the streaming-store threshold): beyond it the
// two-copy path writes with streaming stores and CMA does not. Figures: perf/RESULTS.md,
// "Single copy on shm".
constexpr size_t kBlockSingleCopyBytes = 64 << 10;

/// Below which buffer size blocks go single-copy on a link where CMA works (0: never):
/// `streamStoreBytes` when `singleCopyBytes` is the default (Config::kAutoBytes) and
/// `localRanks` > `cpus`, else 0 (a forced threshold applies to every send alike).
size_t blockSingleCopyExtentBelow(size_t singleCopyBytes, int localRanks, int cpus,
                                  size_t streamStoreBytes);

/// The CPUs this host's ranks may use together: BRAID_SHM_TEST_CPUS where a test sets it,
/// else `hostCpus` (Config::hostCpus, from the ranks' affinity masks) when known, else the
/// host's online CPUs.
int hostCpuCount(int hostCpus);

/// Asks the kernel which pages of this process are huge (transparent or
/// hugetlbfs) with the PAGEMAP_SCAN ioctl on /proc/self/pagemap (Linux 6.7+;
/// one call, microseconds for 128 MiB). Keeps that file open until destroyed
/// (one per connector), reopening it in a forked child. Where the kernel lacks
/// the ioctl every answer is 0 / false: such hosts get two copies.
class HugePageScanner {
 public:
  HugePageScanner() = default;
  ~HugePageScanner();
  HugePageScanner(const HugePageScanner&) = delete;
  HugePageScanner& operator=(const HugePageScanner&) = delete;

  /// How many bytes of [address, address + bytes) lie in huge pages.
  size_t hugeBytes(const void* address, size_t bytes);
  /// The default rule: at least 3/4 of the message lies in huge pages (below
  /// that, the 4 KiB part's slow reads cancel the saved copy).
  bool mostlyHuge(const void* address, size_t bytes);

 private:
  int fd_ = -1;
  int pid_ = 0;  // whose pagemap fd_ is
};

/// One-off forms of the scanner's questions (open, ask, close).
size_t hugePageBytes(const void* address, size_t bytes);
bool mostlyInHugePages(const void* address, size_t bytes);
/// Whether huge pages can be seen on this kernel.
bool hugePageScanAvailable();

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
