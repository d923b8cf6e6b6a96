#include "core/types.h"

namespace braid {

size_t typeSize(braidDataType_t type) {
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

const char* typeName(braidDataType_t type) {
  static const char* const kNames[] = {"int8",    "uint8",    "int32",      "uint32",
                                       "int64",   "uint64",   "float16",    "float32",
                                       "float64", "bfloat16", "float8e4m3", "float8e5m2"};
  return isValidType(type) ? kNames[type] : "invalid";
}

const char* opName(braidRedOp_t op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "avg"};
  return isValidOp(op) ? kNames[op] : "invalid";
}

}  // namespace braid
