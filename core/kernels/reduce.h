// Element-wise reduction kernels for the host executor.
//
// One kernel per (type, op), vectorised for the widest ISA the CPU offers
// (AVX-512, AVX2 + F16C, or a portable loop), chosen once at run time.
// fp16 and bf16 are widened to fp32, combined, and rounded once (to nearest
// even). Avg reduces as sum; the executor divides once at the end.
#pragma once

#include <cstddef>

#include "braid.h"

namespace braid::coll {

/// dst[i] = a[i] (op) b[i] for i < n. dst may alias a or b (exactly, not partially).
using ReduceFn = void (*)(void* dst, const void* a, const void* b, size_t n);

/// dst[i] = dst[i] / divisor for i < n, rounding once (integers truncate toward zero).
using DivideFn = void (*)(void* dst, size_t n, int divisor);

/// The kernel for (type, op); avg maps to sum. nullptr for invalid enums.
/// With `streaming`, the kernel writes dst with non-temporal stores (same results, bit for
/// bit): for destinations far larger than the cache, where an ordinary store would first read
/// each line from memory only to overwrite it (see copy.h). Slower when dst is read soon.
ReduceFn reducerFor(braidDataType_t type, braidRedOp_t op, bool streaming = false);

/// The divide kernel avg needs for `type`; nullptr for invalid enums.
DivideFn dividerFor(braidDataType_t type);

/// The instruction set the kernels were dispatched to: "avx512", "avx2" or "portable".
/// BRAID_REDUCE_ISA=portable|avx2|avx512 caps the choice (for tests and comparisons).
const char* reduceIsa();

}  // namespace braid::coll
