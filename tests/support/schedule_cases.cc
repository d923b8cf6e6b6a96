#include "support/schedule_cases.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/types.h"
#include "support/element_bits.h"

namespace braid::testing {

using coll::CollArgs;
using coll::CollKind;

CollArgs allToAll(int rank, int nranks, size_t count, size_t chunkBytes, bool inPlace) {
  CollArgs a;
  a.kind = CollKind::kAllToAll;
  a.type = braidInt32;
  a.count = count;
  a.rank = rank;
  a.nranks = nranks;
  a.chunkBytes = chunkBytes;
  a.inPlace = inPlace;
  return a;
}

void setUnevenBlocks(CollArgs* args, size_t gap) {
  auto blockCount = [&](int from, int to) { return args->count * ((from + 2 * to) % 3) / 2; };
  size_t sendAt = 0, recvAt = 0;
  for (int j = 0; j < args->nranks; ++j) {
    args->sendCounts.push_back(blockCount(args->rank, j));
    args->sendDispls.push_back(sendAt);
    sendAt += args->sendCounts.back() + gap;
    args->recvCounts.push_back(blockCount(j, args->rank));
    args->recvDispls.push_back(recvAt);
    recvAt += args->recvCounts.back() + gap;
  }
}

double elementAt(braidDataType_t type, const uint8_t* buffer, size_t i) {
  return rawToDouble(type, loadRaw(type, buffer, i));
}

void setElement(braidDataType_t type, uint8_t* buffer, size_t i, double value) {
  storeRaw(type, buffer, i, doubleToRaw(type, value));
}

double reduceInOrder(braidRedOp_t op, braidDataType_t type, const std::vector<double>& values) {
  double acc = values[0];
  for (size_t k = 1; k < values.size(); ++k) {
    const double v = values[k];
    if (op == braidProd) {
      acc *= v;
    } else if (op == braidMax) {
      acc = std::max(acc, v);
    } else if (op == braidMin) {
      acc = std::min(acc, v);
    } else {
      acc += v;  // sum, and avg before its division
    }
  }
  if (op == braidAvg) {
    acc /= static_cast<double>(values.size());
    if (!isFloatType(type)) acc = std::trunc(acc);
  }
  return acc;
}

std::string describe(const HostLayoutCase& c) {
  std::string layout;
  for (int h : c.hosts) layout += std::to_string(h);
  if (!c.domains.empty()) {
    layout += " domains=";
    for (int d : c.domains) layout += std::to_string(d);
  }
  return std::string(coll::collName(c.kind)) + "/" + c.algorithm + " hosts=" + layout +
         " count=" + std::to_string(c.count) + " chunk=" + std::to_string(c.chunkBytes) +
         (c.inPlace ? " in-place " : " ") + typeName(c.type) + " " + opName(c.op) +
         " root=" + std::to_string(c.root);
}

CollArgs argsFor(const HostLayoutCase& c, int rank) {
  CollArgs a;
  a.kind = c.kind;
  a.count = c.count;
  a.type = c.type;
  a.op = c.op;
  a.root = c.root;
  a.rank = rank;
  a.nranks = static_cast<int>(c.hosts.size());
  a.inPlace = c.inPlace;
  a.chunkBytes = c.chunkBytes;
  a.hosts = std::make_shared<const std::vector<int>>(c.hosts);
  if (!c.domains.empty()) a.domains = std::make_shared<const std::vector<int>>(c.domains);
  if (c.kind == CollKind::kAllToAllv) setUnevenBlocks(&a, 0);
  return a;
}

double inputOf(const HostLayoutCase& c, int rank, size_t i) {
  if (c.roundingInputs) return 0.1 * static_cast<double>((rank * 13 + i * 7) % 17) + 1e-3 * rank;
  if (c.op == braidProd) return ((rank + i) % 3 == 0) ? 2 : ((rank + i) % 3 == 1 ? 1 : -1);
  return static_cast<double>((rank * 5 + i * 7) % 19) - 9 + (isFloatType(c.type) ? 0.25 : 0);
}

double reducedInputs(const HostLayoutCase& c, size_t i) {
  std::vector<double> values;
  for (int r = 0; r < static_cast<int>(c.hosts.size()); ++r) values.push_back(inputOf(c, r, i));
  return reduceInOrder(c.op, c.type, values);
}

}  // namespace braid::testing
