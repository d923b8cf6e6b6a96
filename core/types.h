// Element types and reduction operators as the library sees them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "braid.h"

namespace braid {

/// Bytes per element of `type`; 0 for an invalid enum value.
size_t typeSize(braidDataType_t type);
/// "float32", "bfloat16", ...; "invalid" for a bad value.
const char* typeName(braidDataType_t type);
/// "sum", "prod", ...; "invalid" for a bad value.
const char* opName(braidRedOp_t op);

inline bool isValidType(braidDataType_t type) {
  return static_cast<int>(type) >= 0 && type < braidNumTypes;
}
inline bool isValidOp(braidRedOp_t op) { return static_cast<int>(op) >= 0 && op < braidNumOps; }
inline bool isFloatType(braidDataType_t type) {
  return type == braidFloat16 || type == braidFloat32 || type == braidFloat64 ||
         type == braidBfloat16 || type == braidFloat8e4m3 || type == braidFloat8e5m2;
}

}  // namespace braid
