#include "data_check.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "types.h"

namespace braid::perf {
namespace {

constexpr unsigned char kPoisonByte = 0xa5;  // negative non-integers as floats

// Small-integer limits of the reduction patterns (see the header comment).
constexpr int64_t kMaxSumModulus = 16;
constexpr int kMaxDoublings = 15;  // 2^15 = 32768 < 65504, fp16's largest finite value
constexpr int64_t kMaxAverage = 8;

bool takesNegatives(braidDataType_t type) { return isSignedInteger(type) || isFloatingPoint(type); }

double copyValue(braidDataType_t type, int rank, size_t position) {
  const int64_t value = (int64_t{rank} * 37 + static_cast<int64_t>(position % 97) * 11) % 97 + 1;
  return static_cast<double>(takesNegatives(type) ? value - 49 : value);
}

// The parameters of one (type, op, nranks) reduction pattern.
struct ReductionPattern {
  braidRedOp_t op;
  int nranks;
  bool negatives;
  int64_t sumModulus;  // sum: inputs in [0, sumModulus)
  int64_t prodPeriod;  // prod: a 2 where (position + rank) % prodPeriod == 0
  int64_t maxAverage;  // avg: the mean t lies in [0, maxAverage]
};

ReductionPattern makePattern(braidDataType_t type, braidRedOp_t op, int nranks) {
  const int64_t perRank = exactIntegerLimit(type) / nranks;
  ReductionPattern pattern{op, nranks, takesNegatives(type), 1, 4, 0};
  pattern.sumModulus = std::min(kMaxSumModulus, perRank + 1);
  // ceil(n / period) ranks hold a 2 at any position; keep that <= kMaxDoublings.
  // (e4m3's largest finite value is 448, so at most 2^8 there.)
  const int maxDoublings = type == braidFloat8e4m3 ? 8 : kMaxDoublings;
  pattern.prodPeriod = std::max<int64_t>(4, (nranks + maxDoublings - 1) / maxDoublings);
  pattern.maxAverage = std::min(kMaxAverage, perRank);
  return pattern;
}

int64_t averageContribution(const ReductionPattern& p, int rank, size_t position) {
  const int64_t mean = static_cast<int64_t>(position % static_cast<size_t>(p.maxAverage + 1));
  auto share = [&](int r) {
    return static_cast<int64_t>((position + static_cast<size_t>(r)) % (mean + 1));
  };
  if (rank < p.nranks - 1) return share(rank);
  int64_t others = 0;
  for (int r = 0; r < p.nranks - 1; ++r) others += share(r);
  return p.nranks * mean - others;  // in [mean, n * mean]: never negative
}

double reductionInput(const ReductionPattern& p, int rank, size_t position) {
  const size_t r = static_cast<size_t>(rank);
  switch (p.op) {
    case braidSum:
      return static_cast<double>((r * 5 + position % 97 * 3) % p.sumModulus);
    case braidProd:
      return (position + r) % static_cast<size_t>(p.prodPeriod) == 0 ? 2.0 : 1.0;
    case braidMax:
    case braidMin: {
      const int64_t value = static_cast<int64_t>((r * 7 + position % 61 * 3) % 61);
      return static_cast<double>(p.negatives ? value - 30 : value);
    }
    case braidAvg:
      return static_cast<double>(averageContribution(p, rank, position));
    default:
      return 0.0;
  }
}

// The reduction over all ranks of input `position`, folded exactly in double
// (every partial result is a small integer); wrapping happens on store.
double reductionExpected(const ReductionPattern& p, size_t position) {
  if (p.op == braidAvg) {
    return static_cast<double>(position % static_cast<size_t>(p.maxAverage + 1));
  }
  double result = reductionInput(p, 0, position);
  for (int rank = 1; rank < p.nranks; ++rank) {
    const double value = reductionInput(p, rank, position);
    switch (p.op) {
      case braidSum:
        result += value;
        break;
      case braidProd:
        result *= value;
        break;
      case braidMax:
        result = std::max(result, value);
        break;
      case braidMin:
        result = std::min(result, value);
        break;
      default:
        break;
    }
  }
  return result;
}

// What the type stores for `value` (integers wrap), read back as a double.
double asStored(braidDataType_t type, double value) {
  alignas(8) unsigned char scratch[8];
  storeElement(type, scratch, 0, value);
  return loadElement(type, scratch, 0);
}

// Whether this rank's receive buffer holds a defined result.
bool hasOutput(const CheckSpec& spec) {
  const bool rootOnly =
      spec.kind == CollectiveKind::kReduce || spec.kind == CollectiveKind::kGather;
  return !rootOnly || spec.rank == spec.root;
}

// Whether this rank's send buffer is read by the collective.
bool hasInput(const CheckSpec& spec) {
  const bool rootOnly =
      spec.kind == CollectiveKind::kBroadcast || spec.kind == CollectiveKind::kScatter;
  return !rootOnly || spec.rank == spec.root;
}

double expectedAt(const CheckSpec& spec, const ReductionPattern& pattern, size_t index) {
  const size_t count = spec.layout.count;
  const size_t rank = static_cast<size_t>(spec.rank);
  switch (spec.kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduce:
      return reductionExpected(pattern, index);
    case CollectiveKind::kReduceScatter:
      return reductionExpected(pattern, rank * count + index);
    case CollectiveKind::kBroadcast:
      return copyValue(spec.type, spec.root, index);
    case CollectiveKind::kAllGather:
    case CollectiveKind::kGather:
      return copyValue(spec.type, static_cast<int>(index / count), index % count);
    case CollectiveKind::kAllToAll:
      return copyValue(spec.type, static_cast<int>(index / count), rank * count + index % count);
    case CollectiveKind::kScatter:
      return copyValue(spec.type, spec.root, rank * count + index);
    case CollectiveKind::kSendRecv:
      return copyValue(spec.type, (spec.rank + spec.nranks - 1) % spec.nranks, index);
  }
  return 0.0;
}

}  // namespace

void poisonOutput(const CheckSpec& spec, void* recv) {
  std::memset(recv, kPoisonByte, spec.layout.recvCount * elementSize(spec.type));
}

void fillInput(const CheckSpec& spec, void* send) {
  if (!hasInput(spec)) return;
  const bool reduces = collectiveInfo(spec.kind).reduces;
  const ReductionPattern pattern = makePattern(spec.type, spec.op, spec.nranks);
  for (size_t position = 0; position < spec.layout.sendCount; ++position) {
    const double value = reduces ? reductionInput(pattern, spec.rank, position)
                                 : copyValue(spec.type, spec.rank, position);
    storeElement(spec.type, send, position, value);
  }
}

int64_t countWrong(const CheckSpec& spec, const void* recv) {
  if (!hasOutput(spec)) return 0;
  const ReductionPattern pattern = makePattern(spec.type, spec.op, spec.nranks);
  int64_t wrong = 0;
  for (size_t index = 0; index < spec.layout.recvCount; ++index) {
    const double expected = asStored(spec.type, expectedAt(spec, pattern, index));
    // != also counts a NaN result as wrong.
    if (loadElement(spec.type, recv, index) != expected) ++wrong;
  }
  return wrong;
}

void corruptOneElement(const CheckSpec& spec, void* recv) {
  if (!hasOutput(spec) || spec.layout.recvCount == 0) return;
  // The least significant byte holds no sign bit, so the flip can never turn
  // 0 into -0 (equal as floats) and always yields a different value.
  const size_t lowByte =
      std::endian::native == std::endian::little ? 0 : elementSize(spec.type) - 1;
  static_cast<unsigned char*>(recv)[lowByte] ^= 0x01;
}

}  // namespace braid::perf
