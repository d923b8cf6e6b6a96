// Elements of every braid type as "raw" values: the element's bytes
// zero-extended into a uint64_t, with conversions to and from double.
//
// fp16 and bf16 are decoded and encoded here (round to nearest even,
// subnormals included), independently of the library's kernels, so that the
// reference does not share a bug with the code it checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "braid.h"

namespace braid::testing {

/// Bytes per element, 0 for an invalid enum.
size_t elementBytes(braidDataType_t type);
/// "float32", "int8", ...
const char* typeLabel(braidDataType_t type);
/// "sum", "prod", ...
const char* opLabel(braidRedOp_t op);
bool isFloating(braidDataType_t type);
bool isSigned(braidDataType_t type);

/// The bits an element of `type` occupies, as a mask.
uint64_t widthMask(braidDataType_t type);
/// A raw signed element as a two's-complement int64.
int64_t signExtend(braidDataType_t type, uint64_t raw);

/// The OCP fp8 formats (braidFloat8e4m3, braidFloat8e5m2), decoded from their definition;
/// encoding rounds to nearest even and saturates at the largest finite value (NaN: 0x7f).
bool isFp8(braidDataType_t type);
double fp8ToDouble(braidDataType_t type, uint8_t bits);
uint8_t doubleToFp8(braidDataType_t type, double value);

/// IEEE half and bfloat16 conversions.
double halfToDouble(uint16_t bits);
double bfloat16ToDouble(uint16_t bits);
uint16_t doubleToHalf(double value);
uint16_t doubleToBfloat16(double value);

/// Element `index` of a buffer of `type`, and the reverse.
uint64_t loadRaw(braidDataType_t type, const void* buffer, size_t index);
void storeRaw(braidDataType_t type, void* buffer, size_t index, uint64_t raw);
/// The element as a double (integers exactly when |v| < 2^53).
double rawToDouble(braidDataType_t type, uint64_t raw);
/// The nearest element of `type` to `value`, as raw bits.
uint64_t doubleToRaw(braidDataType_t type, double value);
/// A short rendering of an element for failure messages.
std::string formatRaw(braidDataType_t type, uint64_t raw);

}  // namespace braid::testing
