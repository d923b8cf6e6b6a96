// AVX-512 reduction kernels: 64-byte vectors (BW for the 8- and 16-bit lanes, DQ for 64-bit
// multiplies), fp16 converted by the 512-bit VCVTPH2PS / VCVTPS2PH. bf16 keeps the integer
// codec: VCVTNEPS2BF16 flushes subnormals to zero, which would break round-to-nearest-even.
// Built with -mavx512f -mavx512bw -mavx512dq -mavx512vl (src/CMakeLists.txt); without those
// flags the table is absent and dispatch never picks this ISA.
#include "core/kernels/reduce_dispatch.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)

#include <immintrin.h>

#include "core/kernels/reduce_half.h"
#include "core/kernels/reduce_kernels.h"

namespace braid::coll {
namespace {

struct Avx512Fp16Codec {
  using Storage = uint16_t;
  using Vector = Vec<float, 64>;
  using Block = VectorBlock<Vector, 1>;
  static constexpr size_t kElements = 16;

  // The all-lanes masked forms compile to the same instructions; the unmasked intrinsics
  // trip a false -Wmaybe-uninitialized in GCC 12's headers (GCC PR 105593).
  static Block load(const Storage* p) {
    const __m256i half = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return Block{{_mm512_maskz_cvtph_ps(kAllLanes, half)}};
  }
  static void store(Storage* p, const Block& block) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm512_maskz_cvtps_ph(kAllLanes, block.v[0],
                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }

 private:
  static constexpr __mmask16 kAllLanes = 0xffff;
};

struct Avx512Isa {
  static constexpr size_t kVectorBytes = 64;
  using Fp16Codec = Avx512Fp16Codec;
};

constexpr ReduceKernelTable kAvx512Kernels = makeReduceKernelTable<Avx512Isa>();

}  // namespace

const ReduceKernelTable* avx512ReduceKernels() { return &kAvx512Kernels; }

}  // namespace braid::coll

#else  // built without AVX-512 flags

namespace braid::coll {
const ReduceKernelTable* avx512ReduceKernels() { return nullptr; }
}  // namespace braid::coll

#endif
