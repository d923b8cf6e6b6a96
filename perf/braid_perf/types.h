// Element types and reduction operators as braid-perf names and encodes them.
//
// Names follow nccl-tests ("half", "float", "bfloat16", ...) so that scripts
// parsing nccl-tests output read ours unchanged; common aliases are accepted
// on the command line. fp16 and bf16 are encoded here by hand because the
// perf tool may use only the public header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "braid.h"

namespace braid::perf {

/// Bytes per element of `type`.
size_t elementSize(braidDataType_t type);
/// nccl-tests' name for `type` ("int8", "half", "float", "bfloat16", ...).
const char* typeName(braidDataType_t type);
/// Parses a type name or alias ("fp16", "float32", "bf16", ...); nullopt if unknown.
std::optional<braidDataType_t> parseType(std::string_view name);

/// nccl-tests' name for `op` ("sum", "prod", "max", "min", "avg").
const char* opName(braidRedOp_t op);
/// Parses an operator name; nullopt if unknown.
std::optional<braidRedOp_t> parseOp(std::string_view name);

bool isFloatingPoint(braidDataType_t type);
bool isSignedInteger(braidDataType_t type);

/// Largest integer magnitude that `type` holds exactly, and that partial
/// results may reach without rounding (fp16: 2048, bf16: 256, int8: 127, ...).
int64_t exactIntegerLimit(braidDataType_t type);

/// Writes `value` into element `index` of `buffer`, converted to `type`
/// (integers wrap modulo 2^bits; fp16/bf16 round to nearest even).
void storeElement(braidDataType_t type, void* buffer, size_t index, double value);
/// Reads element `index` of `buffer` as a double (exact for every value the
/// checker produces: small integers, and integers wrapped into their type).
double loadElement(braidDataType_t type, const void* buffer, size_t index);

uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
uint16_t floatToBfloat16(float value);
float bfloat16ToFloat(uint16_t bits);
/// The OCP fp8 formats (braidFloat8e4m3, braidFloat8e5m2).
uint8_t floatToFp8(braidDataType_t type, float value);
float fp8ToFloat(braidDataType_t type, uint8_t bits);

}  // namespace braid::perf
