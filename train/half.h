/*
 * fp32 ⇄ bf16 / fp16 conversion for half-precision gradient exchange.
 *
 * Both directions round to nearest, ties to even. fp16 overflows to ±inf and
 * keeps subnormals; NaN stays NaN. These are the only places the harness
 * touches 16-bit formats: master weights, optimizer state and compute stay fp32.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid::train {

enum class Precision { kFp32, kBf16, kFp16 };

uint16_t floatToBf16(float value);
float bf16ToFloat(uint16_t bits);
uint16_t floatToFp16(float value);
float fp16ToFloat(uint16_t bits);

/// Converts `count` floats to `precision` (bf16 or fp16) into `out`.
void toHalf(Precision precision, const float* in, size_t count, uint16_t* out);
/// Converts back to float.
void fromHalf(Precision precision, const uint16_t* in, size_t count, float* out);

}  // namespace braid::train
