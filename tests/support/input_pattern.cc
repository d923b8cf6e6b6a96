#include "support/input_pattern.h"

#include <cmath>
#include <cstring>

namespace braid::testing {
namespace {

uint64_t splitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A uniform double in [0, 1) from the top 53 bits.
double unitInterval(uint64_t hash) { return static_cast<double>(hash >> 11) * 0x1.0p-53; }

}  // namespace

InputPattern::InputPattern(braidDataType_t type, braidRedOp_t op, uint64_t seed, Use use)
    : type_(type), op_(op), seed_(splitMix64(seed)), use_(use) {
  // Kinds with few distinct values draw from a table: cheaper per element, and
  // the values are exact by construction.
  const uint64_t mask = widthMask(type);
  const bool small = type == braidFloat16 || type == braidBfloat16 || isFp8(type);
  setLaneBits(static_cast<int>(8 * elementBytes(type)));  // random bits of the element's width
  if (use == Use::kMove) return;
  if (!isFloating(type)) {
    if (op == braidProd) {  // products wrap; both order-independent modulo 2^bits
      const int64_t signedFactors[] = {1, 2, 3, -1, -2, -3};
      const int64_t unsignedFactors[] = {1, 2, 3, 5};
      for (int64_t f : isSigned(type)
                           ? std::vector<int64_t>(signedFactors, signedFactors + 6)
                           : std::vector<int64_t>(unsignedFactors, unsignedFactors + 4)) {
        table_.push_back(static_cast<uint64_t>(f) & mask);
      }
    } else if (op == braidAvg) {  // small enough that 16 ranks cannot overflow int8 / uint8
      for (int64_t v = isSigned(type) ? -7 : 0; v <= (isSigned(type) ? 7 : 15); ++v) {
        table_.push_back(static_cast<uint64_t>(v) & mask);
      }
    }
    if (!table_.empty()) setLaneBits(16);
    return;
  }
  if (!small) {
    setLaneBits(type == braidFloat32 ? 32 : 64);  // enough random mantissa bits for the type
    return;
  }
  if (isFp8(type) && op == braidProd) {
    // Powers of two would overflow e4m3 (max 448) within nine ranks; these stay in range
    // for any rank count the tests use (the tolerance covers the roundings).
    for (double v : {0.75, 1.0, 1.25, -0.75, -1.0, -1.25}) table_.push_back(doubleToRaw(type, v));
  } else if (op == braidSum || op == braidAvg) {
    // |v| in [1, 4], multiples of 1/4: exact in fp16/bf16, and so are partial sums (fp8
    // rounds them, within the reference's tolerance).
    for (int k = 0; k <= 12; ++k) {
      table_.push_back(doubleToRaw(type, 1.0 + k / 4.0));
      table_.push_back(doubleToRaw(type, -1.0 - k / 4.0));
    }
  } else if (op == braidProd) {  // powers of two: every product is exact
    for (double v : {0.5, 1.0, 2.0, -0.5, -1.0, -2.0}) table_.push_back(doubleToRaw(type, v));
  }
  if (!table_.empty()) setLaneBits(16);
}

void InputPattern::setLaneBits(int bits) {
  laneBits_ = bits;
  laneShift_ = 0;
  while ((64 >> laneShift_) > bits) ++laneShift_;  // log2(64 / bits) lanes per hash
}

uint64_t InputPattern::hashWord(int rank, size_t word) const {
  return splitMix64(seed_ ^ ((static_cast<uint64_t>(rank) << 40) ^ word));
}

// Turns laneBits_ random bits into an element, as the kinds set up in the constructor say.
inline uint64_t InputPattern::valueFromBits(uint64_t h) const {
  if (use_ == Use::kMove) return h;
  if (!table_.empty()) return table_[(h * table_.size()) >> 16];  // h has 16 bits
  if (!isFloating(type_)) return h;  // sum wraps; max/min use the full range
  if (isFp8(type_)) {
    // max/min: random finite, non-zero codes (subnormals included).
    auto bits = static_cast<uint8_t>(h);
    if (std::isnan(fp8ToDouble(type_, bits)) || std::isinf(fp8ToDouble(type_, bits))) bits ^= 0x08;
    if ((bits & 0x7F) == 0) bits |= 1;
    return bits;
  }
  if (type_ == braidFloat16 || type_ == braidBfloat16) {
    // max/min: random finite, non-zero bit patterns (subnormals included).
    const uint16_t exponentMask = type_ == braidFloat16 ? 0x7C00 : 0x7F80;
    uint16_t bits = static_cast<uint16_t>(h);
    if ((bits & exponentMask) == exponentMask) bits &= ~(exponentMask & (exponentMask >> 1));
    if ((bits & 0x7FFF) == 0) bits |= 1;
    return bits;
  }
  const double sign = (h & 1) ? -1.0 : 1.0;
  const double unit = laneBits_ == 64 ? unitInterval(h) : static_cast<double>(h >> 1) * 0x1.0p-31;
  double magnitude;
  switch (op_) {
    case braidSum:
    case braidAvg:
      magnitude = 1.0 + 3.0 * unit;  // every summand >= 1
      break;
    case braidProd:
      magnitude = 0.5 + 1.5 * unit;
      break;
    default:
      magnitude = 1e-3 + 1e6 * unit;  // never zero: no +0/-0 ties
      break;
  }
  const double value = sign * magnitude;
  if (type_ == braidFloat32) {  // the common case, without doubleToRaw's dispatch
    const float narrowed = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &narrowed, sizeof bits);
    return bits;
  }
  return doubleToRaw(type_, value);
}

uint64_t InputPattern::raw(int rank, size_t index) const {
  // One 64-bit hash serves 64 / laneBits_ consecutive elements, each its own lane.
  const uint64_t word = hashWord(rank, index >> laneShift_);
  if (laneBits_ == 64) return valueFromBits(word);
  const size_t lane = index & ((size_t{1} << laneShift_) - 1);
  return valueFromBits((word >> (lane * laneBits_)) & ((uint64_t{1} << laneBits_) - 1));
}

template <typename Element>
void InputPattern::fillAs(int rank, size_t first, size_t count, Element* out) const {
  // raw() for each element, but with one hash per word of lanes.
  const size_t lanes = size_t{1} << laneShift_;
  const uint64_t laneMask = laneBits_ == 64 ? ~uint64_t{0} : (uint64_t{1} << laneBits_) - 1;
  size_t i = 0;
  while (i < count) {
    const size_t index = first + i;
    const uint64_t word = hashWord(rank, index >> laneShift_);
    for (size_t lane = index & (lanes - 1); lane < lanes && i < count; ++lane, ++i) {
      out[i] = static_cast<Element>(valueFromBits((word >> (lane * laneBits_ % 64)) & laneMask));
    }
  }
}

void InputPattern::fill(int rank, size_t first, size_t count, void* buffer) const {
  switch (elementBytes(type_)) {
    case 1:
      return fillAs(rank, first, count, static_cast<uint8_t*>(buffer));
    case 2:
      return fillAs(rank, first, count, static_cast<uint16_t*>(buffer));
    case 4:
      return fillAs(rank, first, count, static_cast<uint32_t*>(buffer));
    default:
      return fillAs(rank, first, count, static_cast<uint64_t*>(buffer));
  }
}

ElementSource sourceFromBuffers(braidDataType_t type, const void* const* inputs) {
  return [type, inputs](int rank, size_t index) { return loadRaw(type, inputs[rank], index); };
}

ElementSource sourceFromPattern(const InputPattern& pattern) {
  return [pattern](int rank, size_t index) { return pattern.raw(rank, index); };
}

}  // namespace braid::testing
