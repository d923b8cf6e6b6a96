// Element types and reduction operators as the library sees them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "braid.h"

namespace braid {

/// Bytes per element of `type`; 0 for an invalid enum value. Inline: every call asks it
/// several times on its way to the first message.
inline size_t typeSize(braidDataType_t type) {
  switch (type) {
    case braidInt8:
    case braidUint8:
    case braidFloat8e4m3:
    case braidFloat8e5m2:
      return 1;
    case braidFloat16:
    case braidBfloat16:
      return 2;
    case braidInt32:
    case braidUint32:
    case braidFloat32:
      return 4;
    case braidInt64:
    case braidUint64:
    case braidFloat64:
      return 8;
    default:
      return 0;
  }
}
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
