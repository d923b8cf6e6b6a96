// Copies of message data into the user's destination, with a streaming variant.
//
// A receive far larger than the caches ends with every destination line in
// memory, not in cache. An ordinary store to such a line first reads it from
// memory (read-for-ownership) only to overwrite it whole, so a copy costs
// three memory transfers per line (read source, read + write destination).
// Non-temporal ("streaming") stores write whole lines without reading them
// and without evicting the cache: two transfers, and the FIFO slots the data
// comes from stay in cache. For a destination that fits in the cache they are
// slower (the data then has to come back from memory when next used), so the
// caller chooses per receive (see Config::streamStoreBytes).
//
// Non-temporal stores are weakly ordered: copyStreaming() ends with a store
// fence, so anything published after it (a counter, a request's done flag)
// is ordered after the copied data.
//
// The instruction set is picked once per process from what the CPU runs:
// AVX2 (32-byte stores), else SSE2 (16-byte, every x86-64), else memcpy on
// other architectures. Tests run each variant through copyStreamingForIsa.
#pragma once

#include <cstddef>

namespace braid::coll {

/// Streaming-copy variants, narrowest first.
enum class CopyIsa { kPortable = 0, kSse2 = 1, kAvx2 = 2 };

/// Copies `bytes` from `src` to `dst` (the ranges must not overlap) with
/// non-temporal stores where the CPU has them, then fences. Any alignment
/// and any size; sizes below a few hundred bytes go through memcpy.
void copyStreaming(void* dst, const void* src, size_t bytes);

/// memcpy, or copyStreaming when `streaming`.
void copyInto(void* dst, const void* src, size_t bytes, bool streaming);

/// The last-level cache of the CPU this runs on, in bytes: from sysfs (what the
/// kernel says about the core's own cache; a VM's CPUID, which sysconf reads, may
/// report the host's), else from sysconf, else 32 MiB.
size_t lastLevelCacheBytes();
/// From which destination size receives stream when BRAID_STREAM_STORE_BYTES is
/// unset: each of `localRanks` ranks' share of the last-level cache, so that
/// what the ranks receive together fits in it when not streamed.
size_t defaultStreamStoreBytes(int localRanks);

/// The widest variant this build compiled and this CPU runs.
CopyIsa streamingCopyIsa();
/// Whether `isa` can run here.
bool copyIsaAvailable(CopyIsa isa);
/// "portable", "sse2" or "avx2".
const char* copyIsaName(CopyIsa isa);
/// copyStreaming with a given variant, for tests and benchmarks; false (nothing
/// copied) when `isa` is not available here.
bool copyStreamingForIsa(CopyIsa isa, void* dst, const void* src, size_t bytes);

}  // namespace braid::coll
