// AVX2 reduction kernels: 32-byte vectors, fp16 converted by F16C (VCVTPH2PS / VCVTPS2PH).
// Built with -mavx2 -mf16c -mfma (src/CMakeLists.txt); without those flags (another
// architecture) the table is absent and dispatch never picks this ISA.
#include "core/kernels/reduce_dispatch.h"

#if defined(__AVX2__) && defined(__F16C__) && defined(__FMA__)

#include <immintrin.h>

#include "core/kernels/reduce_half.h"
#include "core/kernels/reduce_kernels.h"

namespace braid::coll {
namespace {

struct F16cCodec {
  using Storage = uint16_t;
  using Vector = Vec<float, 32>;
  using Block = VectorBlock<Vector, 1>;
  static constexpr size_t kElements = 8;

  static Block load(const Storage* p) {
    return Block{{_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))}};
  }
  static void store(Storage* p, const Block& block) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm256_cvtps_ph(block.v[0], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
};

struct Avx2Isa {
  static constexpr size_t kVectorBytes = 32;
  using Fp16Codec = F16cCodec;
};

constexpr ReduceKernelTable kAvx2Kernels = makeReduceKernelTable<Avx2Isa>();

}  // namespace

const ReduceKernelTable* avx2ReduceKernels() { return &kAvx2Kernels; }

}  // namespace braid::coll

#else  // built without AVX2 flags

namespace braid::coll {
const ReduceKernelTable* avx2ReduceKernels() { return nullptr; }
}  // namespace braid::coll

#endif
