// Run-time choice among the per-ISA reduction kernel tables behind reducerFor/dividerFor.
//
// Each ISA's kernels live in their own translation unit built with that ISA's compiler flags
// (reduce_portable.cc: none; reduce_avx2.cc: AVX2+F16C+FMA; reduce_avx512.cc: AVX-512
// F/BW/DQ/VL). reduce.cc asks the CPU once which of them it can run, caps the answer with
// BRAID_REDUCE_ISA, and hands out kernels from that table. Tests use the *ForIsa hooks to run
// every table the machine supports, whatever the environment says.
#pragma once

#include <optional>

#include "core/kernels/reduce.h"

namespace braid::coll {

/// Instruction sets, narrowest first: a CPU that runs one runs every one before it.
enum class ReduceIsa { kPortable = 0, kAvx2 = 1, kAvx512 = 2 };

/// Ops with a kernel of their own: sum, prod, max, min (avg reuses sum), indexed by their enum.
inline constexpr int kReduceTableOps = braidMin + 1;

/// Every kernel one ISA file provides.
struct ReduceKernelTable {
  ReduceFn reduce[braidNumTypes][kReduceTableOps];
  ReduceFn reduceStreaming[braidNumTypes][kReduceTableOps];  // non-temporal stores to dst
  DivideFn divide[braidNumTypes];
};

/// The table each file compiled; nullptr when the file was built without its ISA's flags (e.g.
/// on a non-x86 target). Says nothing about whether the running CPU supports the ISA.
const ReduceKernelTable* portableReduceKernels();
const ReduceKernelTable* avx2ReduceKernels();
const ReduceKernelTable* avx512ReduceKernels();

/// "portable", "avx2" or "avx512".
const char* reduceIsaName(ReduceIsa isa);
/// The ISA named `name` (as reduceIsaName spells it); nullopt for anything else.
std::optional<ReduceIsa> parseReduceIsa(const char* name);

/// Whether this build compiled `isa`'s table and this CPU (and OS) can run it.
bool reduceIsaAvailable(ReduceIsa isa);

/// The ISA used when BRAID_REDUCE_ISA=`cap` (nullptr or "": no cap): the widest available one
/// not above the cap. An unknown cap is ignored with a warning naming the variable.
ReduceIsa chooseReduceIsa(const char* cap);

/// The kernel for (type, op) on `isa`, ignoring BRAID_REDUCE_ISA; avg maps to sum.
/// nullptr for invalid enums or when `isa` is not available here.
ReduceFn reducerForIsa(braidDataType_t type, braidRedOp_t op, ReduceIsa isa,
                       bool streaming = false);
/// The divide kernel for `type` on `isa`; nullptr as for reducerForIsa.
DivideFn dividerForIsa(braidDataType_t type, ReduceIsa isa);

}  // namespace braid::coll
