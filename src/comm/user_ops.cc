#include "comm/user_ops.h"

#include <cmath>
#include <cstring>
#include <string>

#include "core/fp8.h"
#include "core/types.h"

namespace braid {
namespace {

float bf16ToFloat(uint16_t b) {
  const uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// Round to nearest even, as the reduction kernels narrow (NaN stays a quiet NaN).
uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

template <typename T>
void scaleAs(const void* src, void* dst, size_t count, uint64_t scalarBits) {
  T scalar;
  std::memcpy(&scalar, &scalarBits, sizeof(T));
  const T* in = static_cast<const T*>(src);
  T* out = static_cast<T*>(dst);
  for (size_t i = 0; i < count; ++i) out[i] = static_cast<T>(scalar * in[i]);
}

// fp16 and bf16: widen to fp32, multiply, round once back.
template <typename Widen, typename Narrow>
void scaleHalf(const void* src, void* dst, size_t count, uint64_t scalarBits, Widen widen,
               Narrow narrow) {
  uint16_t raw;
  std::memcpy(&raw, &scalarBits, sizeof(raw));
  const float scalar = widen(raw);
  const uint16_t* in = static_cast<const uint16_t*>(src);
  uint16_t* out = static_cast<uint16_t*>(dst);
  for (size_t i = 0; i < count; ++i) out[i] = narrow(scalar * widen(in[i]));
}

// fp8: widen to fp32, multiply, round once back (nearest even, saturating; core/fp8.h).
template <class Format>
void scaleFp8(const void* src, void* dst, size_t count, uint64_t scalarBits) {
  const float scalar = fp8ToFloat<Format>(static_cast<uint8_t>(scalarBits & 0xff));
  const auto* in = static_cast<const uint8_t*>(src);
  auto* out = static_cast<uint8_t*>(dst);
  for (size_t i = 0; i < count; ++i)
    out[i] = floatToFp8<Format>(scalar * fp8ToFloat<Format>(in[i]));
}

float halfToFloat(uint16_t h) {
  _Float16 v;
  std::memcpy(&v, &h, sizeof(v));
  return static_cast<float>(v);
}

uint16_t floatToHalf(float f) {
  const _Float16 v = static_cast<_Float16>(f);
  uint16_t h;
  std::memcpy(&h, &v, sizeof(h));
  return h;
}

}  // namespace

Result<braidRedOp_t> UserOps::create(braidDataType_t type, const void* scalar) {
  PreMulSum op;
  op.type = type;
  std::memcpy(&op.scalar, scalar, typeSize(type));
  std::lock_guard<std::mutex> lock(mu_);
  if (next_ == braidMaxRedOp) {
    return invalidUsage(
        "braidRedOpCreatePreMulSum: this communicator has used up its operator "
        "values; destroy operators you no longer need");
  }
  const int value = next_++;
  ops_[value] = op;
  return static_cast<braidRedOp_t>(value);
}

Status UserOps::destroy(braidRedOp_t op) {
  if (op >= 0 && op < braidNumOps) {
    return invalidArgument("braidRedOpDestroy: op " + std::to_string(int(op)) +
                           " is a built-in operator (" + opName(op) +
                           "), not one of "
                           "braidRedOpCreatePreMulSum");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (ops_.erase(op) == 1) return Status::ok();
  return invalidArgument("braidRedOpDestroy: op " + std::to_string(int(op)) +
                         " was not created on this communicator (or was destroyed already)");
}

std::optional<PreMulSum> UserOps::find(braidRedOp_t op) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ops_.find(op);
  if (it == ops_.end()) return std::nullopt;
  return it->second;
}

void scaleElements(const PreMulSum& op, const void* src, void* dst, size_t count) {
  switch (op.type) {
    case braidInt8:
      return scaleAs<int8_t>(src, dst, count, op.scalar);
    case braidUint8:
      return scaleAs<uint8_t>(src, dst, count, op.scalar);
    case braidInt32:
      return scaleAs<int32_t>(src, dst, count, op.scalar);
    case braidUint32:
      return scaleAs<uint32_t>(src, dst, count, op.scalar);
    case braidInt64:
      return scaleAs<int64_t>(src, dst, count, op.scalar);
    case braidUint64:
      return scaleAs<uint64_t>(src, dst, count, op.scalar);
    case braidFloat32:
      return scaleAs<float>(src, dst, count, op.scalar);
    case braidFloat64:
      return scaleAs<double>(src, dst, count, op.scalar);
    case braidFloat16:
      return scaleHalf(src, dst, count, op.scalar, halfToFloat, floatToHalf);
    case braidBfloat16:
      return scaleHalf(src, dst, count, op.scalar, bf16ToFloat, floatToBf16);
    case braidFloat8e4m3:
      return scaleFp8<Fp8E4m3Format>(src, dst, count, op.scalar);
    case braidFloat8e5m2:
      return scaleFp8<Fp8E5m2Format>(src, dst, count, op.scalar);
    default:
      return;
  }
}

}  // namespace braid
