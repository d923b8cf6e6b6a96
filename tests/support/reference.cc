#include "support/reference.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace braid::testing {
namespace {

// Unit roundoff of the type the library reduces in.
double unitRoundoff(braidDataType_t type) {
  switch (type) {
    case braidFloat16:
      return std::ldexp(1.0, -11);
    case braidBfloat16:
      return std::ldexp(1.0, -8);
    case braidFloat8e4m3:
      return std::ldexp(1.0, -4);
    case braidFloat8e5m2:
      return std::ldexp(1.0, -3);
    case braidFloat32:
      return std::ldexp(1.0, -24);
    default:
      return std::ldexp(1.0, -53);
  }
}

Expected reduceIntegers(braidDataType_t type, braidRedOp_t op, int nranks, const uint64_t* in) {
  const uint64_t mask = widthMask(type);
  const bool isSignedType = isSigned(type);
  uint64_t acc = in[0] & mask;
  int64_t exactSum = isSignedType ? signExtend(type, in[0]) : static_cast<int64_t>(in[0]);
  for (int r = 1; r < nranks; ++r) {
    uint64_t v = in[r] & mask;
    switch (op) {
      case braidSum:
      case braidAvg:
        acc += v;  // modulo 2^64, then masked: the wraparound of the element type
        // Wrapping, not signed, addition: sums of large int64 patterns overflow (UB, which
        // UBSan reports); only avg reads exactSum, and its patterns never overflow.
        exactSum = static_cast<int64_t>(
            static_cast<uint64_t>(exactSum) +
            static_cast<uint64_t>(isSignedType ? signExtend(type, v) : static_cast<int64_t>(v)));
        break;
      case braidProd:
        acc *= v;
        break;
      case braidMax:
      case braidMin: {
        bool vIsGreater = isSignedType ? signExtend(type, v) > signExtend(type, acc) : v > acc;
        if (vIsGreater == (op == braidMax)) acc = v;
        break;
      }
      default:
        break;
    }
  }
  Expected e;
  if (op == braidAvg) {
    // Avg patterns never overflow, so the exact sum is the element-type sum;
    // C++ division truncates toward zero, as the library's avg does.
    if (isSignedType) {
      acc = static_cast<uint64_t>(exactSum / nranks);
    } else {
      acc = static_cast<uint64_t>(exactSum) / static_cast<uint64_t>(nranks);
    }
  }
  e.raw = acc & mask;
  return e;
}

}  // namespace

Expected reduceReference(braidDataType_t type, braidRedOp_t op, int nranks,
                         const uint64_t* contributions) {
  if (!isFloating(type)) return reduceIntegers(type, op, nranks, contributions);
  Expected e;
  if (op == braidMax || op == braidMin) {
    uint64_t best = contributions[0];
    for (int r = 1; r < nranks; ++r) {
      double v = rawToDouble(type, contributions[r]);
      double b = rawToDouble(type, best);
      if (op == braidMax ? v > b : v < b) best = contributions[r];
    }
    e.raw = best;
    return e;
  }
  e.exact = false;
  const double u = unitRoundoff(type);
  // Pairwise reduction in the element type rounds once per hop: at most
  // (nranks - 1) roundings, each bounded by u times a partial result.
  const double hops = nranks;
  if (op == braidProd) {
    double product = 1;
    for (int r = 0; r < nranks; ++r) product *= rawToDouble(type, contributions[r]);
    e.value = product;
    e.tolerance = 2 * hops * u * std::fabs(product);
    return e;
  }
  double sum = 0, sumAbs = 0;
  for (int r = 0; r < nranks; ++r) {
    double v = rawToDouble(type, contributions[r]);
    sum += v;
    sumAbs += std::fabs(v);
  }
  e.value = sum;
  e.tolerance = 2 * hops * u * sumAbs;
  if (op == braidAvg) {  // sum, then one division that rounds once more
    e.value = sum / nranks;
    e.tolerance = e.tolerance / nranks + 2 * u * std::fabs(e.value);
  }
  return e;
}

bool matches(braidDataType_t type, const Expected& expected, uint64_t got) {
  if (expected.exact) return (got & widthMask(type)) == (expected.raw & widthMask(type));
  double value = rawToDouble(type, got);
  return std::fabs(value - expected.value) <= expected.tolerance;  // false for NaN
}

namespace {

// Collects the first few mismatches of a check for its failure message.
class MismatchReport {
 public:
  explicit MismatchReport(braidDataType_t type) : type_(type) {}
  void add(size_t index, uint64_t got, const std::string& expected) {
    if (++count_ > kShown) return;
    text_ += "\n  [" + std::to_string(index) + "] got " + formatRaw(type_, got) + ", expected " +
             expected;
  }
  void visited() { ++checked_; }
  std::string finish() const {
    if (count_ == 0) return "";
    return std::to_string(count_) + " of " + std::to_string(checked_) +
           " checked elements wrong:" + text_;
  }

 private:
  static constexpr size_t kShown = 5;
  braidDataType_t type_;
  size_t count_ = 0;
  size_t checked_ = 0;
  std::string text_;
};

}  // namespace

std::string checkReduced(braidDataType_t type, braidRedOp_t op, int nranks, const void* got,
                         size_t count, const ElementSource& source, size_t sourceFirst) {
  MismatchReport report(type);
  std::vector<uint64_t> contributions(nranks);
  for (size_t i = 0; i < count; ++i) {
    if (!isChecked(i, count)) continue;
    report.visited();
    for (int r = 0; r < nranks; ++r) contributions[r] = source(r, sourceFirst + i);
    Expected expected = reduceReference(type, op, nranks, contributions.data());
    uint64_t value = loadRaw(type, got, i);
    if (matches(type, expected, value)) continue;
    char tolerance[48];
    std::snprintf(tolerance, sizeof tolerance, "%.9g +- %.3g", expected.value, expected.tolerance);
    report.add(i, value, expected.exact ? formatRaw(type, expected.raw) : tolerance);
  }
  return report.finish();
}

std::string checkCopied(braidDataType_t type, const void* got, size_t count,
                        const ElementSource& source, int sourceRank, size_t sourceFirst) {
  MismatchReport report(type);
  const uint64_t mask = widthMask(type);
  for (size_t i = 0; i < count; ++i) {
    if (!isChecked(i, count)) continue;
    report.visited();
    uint64_t want = source(sourceRank, sourceFirst + i) & mask;
    uint64_t value = loadRaw(type, got, i);
    if (value != want) report.add(i, value, formatRaw(type, want));
  }
  return report.finish();
}

}  // namespace braid::testing
