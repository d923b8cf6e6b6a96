// Portable reduction kernels: 16-byte GCC vectors, which every target lowers to what it has
// (SSE2 on x86-64, NEON on Arm, scalar code elsewhere), and fp16 converted in integer
// arithmetic. Built with no ISA flags, so it runs on any CPU of the target architecture.
#include "core/kernels/reduce_dispatch.h"
#include "core/kernels/reduce_half.h"
#include "core/kernels/reduce_kernels.h"

namespace braid::coll {
namespace {

struct PortableIsa {
  static constexpr size_t kVectorBytes = 16;
  using Fp16Codec = SoftFp16Codec<kVectorBytes>;
};

constexpr ReduceKernelTable kPortableKernels = makeReduceKernelTable<PortableIsa>();

}  // namespace

const ReduceKernelTable* portableReduceKernels() { return &kPortableKernels; }

}  // namespace braid::coll
