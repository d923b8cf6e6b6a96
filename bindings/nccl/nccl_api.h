// What the drop-in's source files share: how an NCCL entry point is defined and exported,
// and how a call answers (braid's result, or the drop-in's own refusal with a sentence that
// ncclGetLastError returns).
#pragma once

#include <string>

#include "braid.h"
#include "nccl_abi.h"

namespace braid::nccl {

/// braid's result, as NCCL's; ncclGetLastError then reports braid's message.
Result forward(braidResult_t result);

/// The drop-in's own error: `message` becomes this thread's ncclGetLastError.
Result refuse(Result code, const std::string& message);

/// ncclInvalidUsage for a call braid has no counterpart for; `what` names the feature.
Result unmapped(const char* name, const char* what);

}  // namespace braid::nccl

// Defines pnccl<name> and its weak alias nccl<name>, both exported, as NCCL does.
#define NCCL_API(ret, name, params)                                                          \
  extern "C" __attribute__((visibility("default"))) ret p##name params;                      \
  extern "C" __attribute__((visibility("default"), weak, alias("p" #name))) ret name params; \
  extern "C" ret p##name params
