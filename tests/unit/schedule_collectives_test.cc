// Every registered (algorithm, collective) pair, run by the schedule simulator
// over a grid of rank counts, element counts, chunk sizes, in place / out of
// place and (type, op) pairs, against a reference computed here in double
// precision. Inputs are small integers (plus a quarter for floats) so that
// sums, products, minima and maxima are exact in every type: results must
// match bit for bit, except float avg, which may round differently.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "core/types.h"
#include "support/schedule_cases.h"
#include "support/schedule_simulator.h"

namespace braid::coll {
namespace {

using testing::SimRank;

struct Case {
  CollKind kind;
  std::string algorithm;
  int nranks;
  size_t count;
  size_t chunkBytes;
  bool inPlace;
  braidDataType_t type = braidFloat32;
  braidRedOp_t op = braidSum;
  int root = 0;
};

std::string describe(const Case& c) {
  return std::string(collName(c.kind)) + "/" + c.algorithm + " n=" + std::to_string(c.nranks) +
         " count=" + std::to_string(c.count) + " chunk=" + std::to_string(c.chunkBytes) +
         (c.inPlace ? " in-place " : " out-of-place ") + typeName(c.type) + " " + opName(c.op) +
         " root=" + std::to_string(c.root);
}

using testing::elementAt;
using testing::setElement;

// `value` as the element type holds it.
double roundTrip(braidDataType_t type, double value) {
  uint8_t bytes[8];
  setElement(type, bytes, 0, value);
  return elementAt(type, bytes, 0);
}

// Element i of rank r's input: exact in every type under every op of the grid.
double inputValue(const Case& c, int r, size_t i) {
  if (c.op == braidProd) {
    static const double kFloat[] = {1, 2, -1, 0.5}, kInt[] = {1, 2, -1, 1};
    size_t k = (r * 3 + i) % 4;
    return isFloatType(c.type) ? kFloat[k] : kInt[k];
  }
  double v = static_cast<double>((r * 7 + i * 3) % 23);
  if (c.type == braidUint8) return v;
  return v - 11 + (isFloatType(c.type) ? 0.25 : 0);
}

CollArgs argsFor(const Case& c, int rank) {
  CollArgs args;
  args.kind = c.kind;
  args.count = c.count;
  args.type = c.type;
  args.op = c.op;
  args.root = c.root;
  args.rank = rank;
  args.nranks = c.nranks;
  args.inPlace = c.inPlace;
  args.chunkBytes = c.chunkBytes;
  // Uneven blocks, some empty, with one-element gaps between them.
  if (c.kind == CollKind::kAllToAllv) testing::setUnevenBlocks(&args, /*gap=*/1);
  return args;
}

// The expected receive buffer of every rank (empty where a rank has none),
// in elements, from the inputs (each rank's whole send buffer).
std::vector<std::vector<double>> expected(const Case& c, const std::vector<std::vector<double>>& in,
                                          const std::vector<CollArgs>& args) {
  const int n = c.nranks;
  const size_t count = c.count;
  std::vector<std::vector<double>> out(n);
  auto column = [&](size_t at) {
    std::vector<double> values;
    for (int k = 0; k < n; ++k) values.push_back(in[k][at]);
    return testing::reduceInOrder(c.op, c.type, values);
  };
  for (int r = 0; r < n; ++r) {
    std::vector<double>& o = out[r];
    o.assign(recvBufferBytes(args[r]) / typeSize(c.type), 0);
    for (size_t i = 0; i < count; ++i) {
      for (int b = 0; b < n; ++b) {
        switch (c.kind) {
          case CollKind::kAllGather:
            o[b * count + i] = in[b][i];
            break;
          case CollKind::kAllToAll:
            o[b * count + i] = in[b][r * count + i];
            break;
          case CollKind::kGather:
            if (r == c.root) o[b * count + i] = in[b][i];
            break;
          default:
            break;
        }
      }
      switch (c.kind) {
        case CollKind::kAllReduce:
          o[i] = column(i);
          break;
        case CollKind::kReduce:
          if (r == c.root) o[i] = column(i);
          break;
        case CollKind::kBroadcast:
          o[i] = in[c.root][i];
          break;
        case CollKind::kReduceScatter:
          o[i] = column(r * count + i);
          break;
        case CollKind::kScatter:
          o[i] = in[c.root][r * count + i];
          break;
        default:
          break;
      }
    }
    if (c.kind == CollKind::kAllToAllv) {
      for (int j = 0; j < n; ++j) {
        for (size_t i = 0; i < args[r].recvCounts[j]; ++i) {
          o[args[r].recvDispls[j] + i] = in[j][args[j].sendDispls[r] + i];
        }
      }
    }
  }
  return out;
}

bool isGap(const Case& c, const CollArgs& args, size_t element) {
  if (c.kind != CollKind::kAllToAllv) return false;
  for (int j = 0; j < c.nranks; ++j) {
    if (element >= args.recvDispls[j] && element < args.recvDispls[j] + args.recvCounts[j]) {
      return false;
    }
  }
  return true;
}

void runCase(const Case& c, testing::Buffering buffering = testing::Buffering::kRendezvous) {
  SCOPED_TRACE(describe(c));
  const size_t elem = typeSize(c.type);
  std::vector<CollArgs> args;
  std::vector<SimRank> ranks;
  std::vector<std::vector<double>> in(c.nranks);
  for (int r = 0; r < c.nranks; ++r) {
    args.push_back(argsFor(c, r));
    ranks.push_back(testing::makeSimRank(args[r]));
    size_t inputs = sendBufferBytes(args[r]) / elem;
    for (size_t i = 0; i < inputs; ++i) {
      in[r].push_back(inputValue(c, r, i));
      setElement(c.type, ranks[r].send(), i, in[r][i]);
    }
  }
  // Inputs as stored (the type may have rounded them), then the reference from those.
  for (int r = 0; r < c.nranks; ++r) {
    for (size_t i = 0; i < in[r].size(); ++i) in[r][i] = elementAt(c.type, ranks[r].send(), i);
  }
  std::vector<std::vector<double>> want = expected(c, in, args);
  std::vector<std::vector<uint8_t>> sendBefore;
  for (SimRank& rank : ranks) {
    sendBefore.emplace_back(rank.send(), rank.send() + sendBufferBytes(rank.args));
  }

  Status status = testing::simulateCollective(ranks, c.algorithm, buffering);
  ASSERT_TRUE(status.isOk()) << status.message();

  for (int r = 0; r < c.nranks; ++r) {
    for (size_t i = 0; i < want[r].size(); ++i) {
      if (isGap(c, args[r], i)) continue;
      double got = elementAt(c.type, ranks[r].recv(), i);
      if (c.op == braidAvg && isFloatType(c.type)) {
        // Dividing in the element type may round differently from the reference.
        ASSERT_NEAR(got, want[r][i], 1e-5 * std::max(1.0, std::fabs(want[r][i])))
            << "rank " << r << " element " << i;
      } else {
        ASSERT_EQ(got, roundTrip(c.type, want[r][i])) << "rank " << r << " element " << i;
      }
    }
    if (!c.inPlace) {
      ASSERT_EQ(0, std::memcmp(sendBefore[r].data(), ranks[r].send(), sendBefore[r].size()))
          << "rank " << r << " wrote its send buffer";
    }
  }
  if (c.kind == CollKind::kAllReduce) {
    // Every rank must hold the same bits, whatever the reduction order.
    for (int r = 1; r < c.nranks; ++r) {
      ASSERT_EQ(0, std::memcmp(ranks[0].recv(), ranks[r].recv(), c.count * elem)) << "rank " << r;
    }
  }
}

bool reduces(CollKind kind) {
  return kind == CollKind::kAllReduce || kind == CollKind::kReduce ||
         kind == CollKind::kReduceScatter;
}

using testing::TypeOp;

class ScheduleCollectiveTest : public ::testing::TestWithParam<Algorithm> {};

TEST_P(ScheduleCollectiveTest, MatchesReferenceOverGrid) {
  const Algorithm& algorithm = GetParam();
  static const TypeOp kReductions[] = {{braidFloat32, braidSum},  {braidFloat32, braidAvg},
                                       {braidInt32, braidMax},    {braidInt32, braidAvg},
                                       {braidFloat64, braidProd}, {braidInt32, braidMin}};
  static const TypeOp kMovements[] = {
      {braidFloat32, braidSum}, {braidUint8, braidSum}, {braidFloat64, braidSum}};
  const bool reduction = reduces(algorithm.kind);
  size_t variant = 0;
  for (int nranks : {1, 2, 3, 4, 5, 8}) {
    for (size_t count : {size_t(1), size_t(7), size_t(131), size_t(1000)}) {
      for (size_t chunkBytes : {size_t(3), size_t(40), size_t(1) << 20}) {
        if (chunkBytes == 3 && count == 1000 && nranks > 4) continue;  // keeps the suite fast
        for (bool inPlace : {false, true}) {
          // Two (type, op) pairs per point, rotating so the grid covers all of them.
          for (int k = 0; k < 2; ++k, ++variant) {
            const TypeOp& t = reduction ? kReductions[variant % std::size(kReductions)]
                                        : kMovements[variant % std::size(kMovements)];
            Case c{algorithm.kind, algorithm.name, nranks, count, chunkBytes, inPlace};
            c.type = t.type;
            c.op = t.op;
            c.root = static_cast<int>((count + variant) % nranks);
            runCase(c);
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

// A buffering connector lets sends finish early; results must not change.
TEST_P(ScheduleCollectiveTest, MatchesReferenceWithBufferingConnectors) {
  const Algorithm& algorithm = GetParam();
  const braidRedOp_t op = reduces(algorithm.kind) ? braidAvg : braidSum;
  for (int nranks : {3, 5}) {
    for (bool inPlace : {false, true}) {
      Case c{algorithm.kind, algorithm.name, nranks, 131, 40, inPlace, braidInt32, op, 1};
      runCase(c, testing::Buffering::kEager);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// Automatic selection on both sides of the rd / tree and tree / ring size thresholds.
TEST(ScheduleDefaultTest, AutomaticChoicesMatchReference) {
  for (size_t count :
       {size_t(4 << 10), size_t(4 << 10) + 1, size_t(16 << 10), size_t(16 << 10) + 1}) {
    for (CollKind kind : {CollKind::kAllReduce, CollKind::kBroadcast, CollKind::kReduce}) {
      Case c{kind, "", 4, count, 64 << 10, false, braidFloat32, braidSum, 3};
      runCase(c);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

std::vector<Algorithm> dataAlgorithms() {
  std::vector<Algorithm> out;
  for (const Algorithm& a : allAlgorithms()) {
    if (a.kind != CollKind::kBarrier) out.push_back(a);
  }
  return out;
}

}  // namespace

// Names the parameter in gtest's messages.
void PrintTo(const Algorithm& algorithm, std::ostream* os) {
  *os << algorithm.name << " " << collName(algorithm.kind);
}

namespace {

INSTANTIATE_TEST_SUITE_P(Registry, ScheduleCollectiveTest, ::testing::ValuesIn(dataAlgorithms()),
                         [](const ::testing::TestParamInfo<Algorithm>& info) {
                           return std::string(info.param.name) + "_" + collName(info.param.kind);
                         });

}  // namespace
}  // namespace braid::coll
