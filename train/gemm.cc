/*
 * Cache-blocked GEMM in the Goto/BLIS arrangement.
 *
 * Loops, outermost first: column blocks of C (kNc), depth blocks (kKc), row
 * blocks (kMc). For each (column, depth) block op(B) is packed into panels of
 * kNr columns stored k-major, so the micro-kernel reads it sequentially; for
 * each row block op(A) is packed into panels of kMr rows, also k-major. The
 * micro-kernel keeps a kMr × kNr tile of C in vector registers for the whole
 * depth block and adds it to C once. Edges are packed with zeros, so edge tiles
 * run the same arithmetic as interior ones: that, and summing each depth block
 * in k order, is what makes results independent of the shape (see gemm.h).
 *
 * The kernel uses GCC vector extensions (portable; the compiler lowers them to
 * SSE where AVX is missing) and is cloned for x86-64-v3 (AVX2), picked at load
 * time. No FMA contraction happens in ISO C++ mode, so both clones round alike.
 */
#include "train/gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace braid::train {
namespace {

constexpr int kMr = 4;     // rows of the register tile
constexpr int kNr = 16;    // columns of the register tile (two 8-float vectors)
constexpr int kKc = 256;   // depth block: a kKc × kNr B panel is 16 KiB (L1)
constexpr int kMc = 64;    // row block: a kMc × kKc A block is 64 KiB (L2)
constexpr int kNc = 1024;  // column block: a kKc × kNc B block is 1 MiB

typedef float Vec8 __attribute__((vector_size(32)));

inline float elementA(const GemmArgs& g, int i, int k) {
  return g.transA ? g.a[static_cast<size_t>(k) * g.lda + i]
                  : g.a[static_cast<size_t>(i) * g.lda + k];
}
inline float elementB(const GemmArgs& g, int k, int j) {
  return g.transB ? g.b[static_cast<size_t>(j) * g.ldb + k]
                  : g.b[static_cast<size_t>(k) * g.ldb + j];
}

/// Packs op(A)[i0, i0+mc) × [k0, k0+kc) into kMr-row panels, k-major, zero-padded.
void packA(const GemmArgs& g, int i0, int mc, int k0, int kc, float* dst) {
  for (int p = 0; p < mc; p += kMr) {
    for (int k = 0; k < kc; ++k) {
      for (int r = 0; r < kMr; ++r) {
        *dst++ = (p + r < mc) ? elementA(g, i0 + p + r, k0 + k) : 0.0f;
      }
    }
  }
}

/// Packs op(B)[k0, k0+kc) × [j0, j0+nc) into kNr-column panels, k-major, zero-padded.
void packB(const GemmArgs& g, int k0, int kc, int j0, int nc, float* dst) {
  for (int q = 0; q < nc; q += kNr) {
    int width = std::min(kNr, nc - q);
    for (int k = 0; k < kc; ++k) {
      if (!g.transB && width == kNr) {
        std::memcpy(dst, &g.b[static_cast<size_t>(k0 + k) * g.ldb + j0 + q], sizeof(float) * kNr);
        dst += kNr;
        continue;
      }
      for (int c = 0; c < kNr; ++c) *dst++ = (c < width) ? elementB(g, k0 + k, j0 + q + c) : 0.0f;
    }
  }
}

/// C[i0.., j0..] (+)= packed A block · packed B block, tile by tile.
__attribute__((target_clones("arch=x86-64-v3", "default"))) void multiplyBlock(
    const float* packedA, const float* packedB, int mc, int nc, int kc, float* c, int ldc,
    bool overwrite) {
  for (int q = 0; q < nc; q += kNr) {
    const float* bPanel = packedB + static_cast<size_t>(q) * kc;
    int width = std::min(kNr, nc - q);
    for (int p = 0; p < mc; p += kMr) {
      const float* aPanel = packedA + static_cast<size_t>(p) * kc;
      Vec8 acc[kMr][2] = {};
      for (int k = 0; k < kc; ++k) {
        Vec8 b0, b1;
        std::memcpy(&b0, bPanel + k * kNr, sizeof(Vec8));
        std::memcpy(&b1, bPanel + k * kNr + 8, sizeof(Vec8));
        for (int r = 0; r < kMr; ++r) {
          float a = aPanel[k * kMr + r];
          acc[r][0] += a * b0;
          acc[r][1] += a * b1;
        }
      }
      int height = std::min(kMr, mc - p);
      for (int r = 0; r < height; ++r) {
        float tile[kNr];
        std::memcpy(tile, &acc[r][0], sizeof(tile));
        float* row = c + static_cast<size_t>(p + r) * ldc + q;
        if (overwrite) {
          for (int col = 0; col < width; ++col) row[col] = tile[col];
        } else {
          for (int col = 0; col < width; ++col) row[col] += tile[col];
        }
      }
    }
  }
}

}  // namespace

void gemm(const GemmArgs& g) {
  if (g.m <= 0 || g.n <= 0) return;
  if (g.k <= 0) {
    if (!g.accumulate) {
      for (int i = 0; i < g.m; ++i) std::fill_n(g.c + static_cast<size_t>(i) * g.ldc, g.n, 0.0f);
    }
    return;
  }
  // Thread-local scratch: the packing buffers are reused across calls.
  thread_local std::vector<float> packedA, packedB;
  packedA.resize(static_cast<size_t>(kMc + kMr) * kKc);
  packedB.resize(static_cast<size_t>(kNc + kNr) * kKc);
  for (int j0 = 0; j0 < g.n; j0 += kNc) {
    int nc = std::min(kNc, g.n - j0);
    for (int k0 = 0; k0 < g.k; k0 += kKc) {
      int kc = std::min(kKc, g.k - k0);
      packB(g, k0, kc, j0, nc, packedB.data());
      for (int i0 = 0; i0 < g.m; i0 += kMc) {
        int mc = std::min(kMc, g.m - i0);
        packA(g, i0, mc, k0, kc, packedA.data());
        multiplyBlock(packedA.data(), packedB.data(), mc, nc, kc,
                      g.c + static_cast<size_t>(i0) * g.ldc + j0, g.ldc, k0 == 0 && !g.accumulate);
      }
    }
  }
}

void gemmReference(const GemmArgs& g) {
  for (int i = 0; i < g.m; ++i) {
    for (int j = 0; j < g.n; ++j) {
      double sum = 0;
      for (int k = 0; k < g.k; ++k) sum += double{elementA(g, i, k)} * elementB(g, k, j);
      float& out = g.c[static_cast<size_t>(i) * g.ldc + j];
      out = static_cast<float>(g.accumulate ? out + sum : sum);
    }
  }
}

}  // namespace braid::train
