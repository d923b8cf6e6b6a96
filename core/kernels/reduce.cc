// Picks the reduction kernel table once per process: the widest ISA that this build compiled
// and this CPU runs, capped by BRAID_REDUCE_ISA. Built with no ISA flags, so it is safe to run
// anywhere; only the table it returns may use wider instructions.
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "core/kernels/reduce.h"
#include "core/kernels/reduce_dispatch.h"
#include "core/log.h"
#include "core/types.h"

namespace braid::coll {
namespace {

constexpr ReduceIsa kWidestFirst[] = {ReduceIsa::kAvx512, ReduceIsa::kAvx2, ReduceIsa::kPortable};

const ReduceKernelTable* compiledTable(ReduceIsa isa) {
  switch (isa) {
    case ReduceIsa::kPortable:
      return portableReduceKernels();
    case ReduceIsa::kAvx2:
      return avx2ReduceKernels();
    case ReduceIsa::kAvx512:
      return avx512ReduceKernels();
  }
  return nullptr;
}

#if defined(__x86_64__) || defined(__i386__)
// CPUID leaf 1, ECX bit 29 (clang's __builtin_cpu_supports does not know "f16c").
bool cpuHasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}
#endif

// Every extension the ISA file's compiler flags allow it to use must be present.
// (__builtin_cpu_supports also checks that the OS saves the wide registers.)
bool cpuRuns(ReduceIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();  // needed if the first caller runs inside a static constructor
  switch (isa) {
    case ReduceIsa::kPortable:
      return true;
    case ReduceIsa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpuHasF16c();
    case ReduceIsa::kAvx512:
      return cpuRuns(ReduceIsa::kAvx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl");
  }
  return false;
#else
  return isa == ReduceIsa::kPortable;
#endif
}

const ReduceKernelTable* availableTable(ReduceIsa isa) {
  return cpuRuns(isa) ? compiledTable(isa) : nullptr;
}

struct Dispatch {
  ReduceIsa isa;
  const ReduceKernelTable* table;
};

const Dispatch& dispatch() {
  static const Dispatch kDispatch = [] {
    const ReduceIsa isa = chooseReduceIsa(std::getenv("BRAID_REDUCE_ISA"));
    BRAID_INFO("host reduction kernels: %s", reduceIsaName(isa));
    return Dispatch{isa, availableTable(isa)};
  }();
  return kDispatch;
}

ReduceFn lookupReducer(const ReduceKernelTable* table, braidDataType_t type, braidRedOp_t op,
                       bool streaming) {
  if (table == nullptr || !isValidType(type) || !isValidOp(op)) return nullptr;
  if (op == braidAvg) op = braidSum;  // the executor divides once at the end
  return streaming ? table->reduceStreaming[type][op] : table->reduce[type][op];
}

DivideFn lookupDivider(const ReduceKernelTable* table, braidDataType_t type) {
  if (table == nullptr || !isValidType(type)) return nullptr;
  return table->divide[type];
}

}  // namespace

const char* reduceIsaName(ReduceIsa isa) {
  switch (isa) {
    case ReduceIsa::kPortable:
      return "portable";
    case ReduceIsa::kAvx2:
      return "avx2";
    case ReduceIsa::kAvx512:
      return "avx512";
  }
  return "invalid";
}

std::optional<ReduceIsa> parseReduceIsa(const char* name) {
  if (name == nullptr) return std::nullopt;
  for (ReduceIsa isa : kWidestFirst) {
    if (std::strcmp(name, reduceIsaName(isa)) == 0) return isa;
  }
  return std::nullopt;
}

bool reduceIsaAvailable(ReduceIsa isa) { return availableTable(isa) != nullptr; }

ReduceIsa chooseReduceIsa(const char* cap) {
  ReduceIsa limit = ReduceIsa::kAvx512;
  if (cap != nullptr && cap[0] != '\0') {
    if (std::optional<ReduceIsa> parsed = parseReduceIsa(cap)) {
      limit = *parsed;
    } else {
      BRAID_WARN("BRAID_REDUCE_ISA=%s is not one of portable, avx2, avx512; ignoring it", cap);
    }
  }
  for (ReduceIsa isa : kWidestFirst) {
    if (isa <= limit && reduceIsaAvailable(isa)) return isa;
  }
  return ReduceIsa::kPortable;  // always compiled and always runnable
}

ReduceFn reducerForIsa(braidDataType_t type, braidRedOp_t op, ReduceIsa isa, bool streaming) {
  return lookupReducer(availableTable(isa), type, op, streaming);
}

DivideFn dividerForIsa(braidDataType_t type, ReduceIsa isa) {
  return lookupDivider(availableTable(isa), type);
}

ReduceFn reducerFor(braidDataType_t type, braidRedOp_t op, bool streaming) {
  return lookupReducer(dispatch().table, type, op, streaming);
}

DivideFn dividerFor(braidDataType_t type) { return lookupDivider(dispatch().table, type); }

const char* reduceIsa() { return reduceIsaName(dispatch().isa); }

}  // namespace braid::coll
