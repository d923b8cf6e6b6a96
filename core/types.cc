#include "core/types.h"

namespace braid {

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
