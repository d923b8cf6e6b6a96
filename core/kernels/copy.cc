// Streaming copies (copy.h): one function per instruction set, chosen once.
//
// Shape of every variant: memcpy the head up to the first 64-byte-aligned
// destination address (so each non-temporal store fills part of exactly one
// line, and the write-combining buffers flush whole lines), stream the body
// 128 bytes per iteration with unaligned loads (the source — a FIFO slot or a
// user buffer — has any alignment), memcpy the tail, then sfence.
// The AVX2 variant is compiled with a target attribute rather than file-wide
// flags, so the rest of this file still runs on any x86-64 CPU.
#include "core/kernels/copy.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BRAID_COPY_X86 1
#endif

namespace braid::coll {
namespace {

// Below this a streaming copy saves nothing worth its fence.
constexpr size_t kMinStreamingBytes = 256;
constexpr uintptr_t kLine = 64;
constexpr size_t kBlock = 128;  // bytes per loop iteration

using CopyFn = void (*)(void* dst, const void* src, size_t bytes);

// Splits [dst, dst + bytes) into an unaligned head, a body of whole blocks
// starting on a line boundary and a tail; copies head and tail with memcpy and
// hands the body to `body`, then fences.
template <typename Body>
inline void copySplit(void* dst, const void* src, size_t bytes, Body body) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  size_t head = (kLine - (reinterpret_cast<uintptr_t>(d) & (kLine - 1))) & (kLine - 1);
  if (head > bytes) head = bytes;
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  size_t blocks = bytes / kBlock;
  body(d, s, blocks);
  size_t done = blocks * kBlock;
  std::memcpy(d + done, s + done, bytes - done);
}

void copyPortable(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }

#ifdef BRAID_COPY_X86
void copySse2(void* dst, const void* src, size_t bytes) {
  copySplit(dst, src, bytes, [](uint8_t* d, const uint8_t* s, size_t blocks) {
    for (size_t b = 0; b < blocks; ++b, d += kBlock, s += kBlock) {
      __m128i v[8];
      for (int i = 0; i < 8; ++i) v[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s) + i);
      for (int i = 0; i < 8; ++i) _mm_stream_si128(reinterpret_cast<__m128i*>(d) + i, v[i]);
    }
  });
  _mm_sfence();
}

__attribute__((target("avx2"))) void avx2Body(uint8_t* d, const uint8_t* s, size_t blocks) {
  for (size_t b = 0; b < blocks; ++b, d += kBlock, s += kBlock) {
    __m256i v[4];
    for (int i = 0; i < 4; ++i) {
      v[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s) + i);
    }
    for (int i = 0; i < 4; ++i) _mm256_stream_si256(reinterpret_cast<__m256i*>(d) + i, v[i]);
  }
}

void copyAvx2(void* dst, const void* src, size_t bytes) {
  copySplit(dst, src, bytes, avx2Body);
  _mm_sfence();
}
#endif

CopyFn compiledCopy(CopyIsa isa) {
  switch (isa) {
    case CopyIsa::kPortable:
      return copyPortable;
#ifdef BRAID_COPY_X86
    case CopyIsa::kSse2:
      return copySse2;
    case CopyIsa::kAvx2:
      return copyAvx2;
#else
    default:
      return nullptr;
#endif
  }
  return nullptr;
}

CopyIsa widestAvailable() {
  for (CopyIsa isa : {CopyIsa::kAvx2, CopyIsa::kSse2}) {
    if (copyIsaAvailable(isa)) return isa;
  }
  return CopyIsa::kPortable;
}

// Chosen on first use; a function-local static is thread-safe to initialise.
CopyFn chosenCopy() {
  static const CopyFn kChosen = compiledCopy(widestAvailable());
  return kChosen;
}

}  // namespace

bool copyIsaAvailable(CopyIsa isa) {
  if (compiledCopy(isa) == nullptr) return false;
#ifdef BRAID_COPY_X86
  __builtin_cpu_init();
  if (isa == CopyIsa::kAvx2) return __builtin_cpu_supports("avx2");
#endif
  return true;
}

CopyIsa streamingCopyIsa() { return widestAvailable(); }

const char* copyIsaName(CopyIsa isa) {
  switch (isa) {
    case CopyIsa::kPortable:
      return "portable";
    case CopyIsa::kSse2:
      return "sse2";
    case CopyIsa::kAvx2:
      return "avx2";
  }
  return "unknown";
}

void copyStreaming(void* dst, const void* src, size_t bytes) {
  if (bytes < kMinStreamingBytes) {
    std::memcpy(dst, src, bytes);
    return;
  }
  chosenCopy()(dst, src, bytes);
}

void copyInto(void* dst, const void* src, size_t bytes, bool streaming) {
  if (streaming) {
    copyStreaming(dst, src, bytes);
  } else {
    std::memcpy(dst, src, bytes);
  }
}

namespace {

// Bytes of the highest-level data or unified cache sysfs lists for cpu0; 0 if none.
size_t sysfsLastLevelCacheBytes() {
  size_t best = 0;
  int bestLevel = 0;
  for (int index = 0; index < 16; ++index) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    FILE* file = std::fopen((dir + "level").c_str(), "r");
    if (file == nullptr) break;
    int level = 0;
    bool ok = std::fscanf(file, "%d", &level) == 1;
    std::fclose(file);
    char type[32] = {};
    file = std::fopen((dir + "type").c_str(), "r");
    if (file == nullptr) continue;
    ok = ok && std::fscanf(file, "%31s", type) == 1;
    std::fclose(file);
    unsigned long long size = 0;
    char unit = 0;
    file = std::fopen((dir + "size").c_str(), "r");
    if (file == nullptr) continue;
    ok = ok && std::fscanf(file, "%llu%c", &size, &unit) >= 1;
    std::fclose(file);
    if (!ok || std::strcmp(type, "Instruction") == 0 || level <= bestLevel) continue;
    if (unit == 'K') size <<= 10;
    if (unit == 'M') size <<= 20;
    bestLevel = level;
    best = static_cast<size_t>(size);
  }
  return best;
}

}  // namespace

size_t lastLevelCacheBytes() {
  static const size_t kBytes = [] {
    size_t bytes = sysfsLastLevelCacheBytes();
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (bytes == 0) {
      long level3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
      bytes = level3 > 0 ? static_cast<size_t>(level3) : 0;
    }
#endif
    return bytes != 0 ? bytes : size_t{32} << 20;
  }();
  return kBytes;
}

size_t defaultStreamStoreBytes(int localRanks) {
  return lastLevelCacheBytes() / static_cast<size_t>(localRanks > 0 ? localRanks : 1);
}

bool copyStreamingForIsa(CopyIsa isa, void* dst, const void* src, size_t bytes) {
  if (!copyIsaAvailable(isa)) return false;
  compiledCopy(isa)(dst, src, bytes);
  return true;
}

}  // namespace braid::coll
