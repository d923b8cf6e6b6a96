// Arguments, inputs and reference values shared by the schedule tests
// (tests/unit/schedule_*_test.cc), which run built schedules in the schedule
// simulator (support/schedule_simulator.h) and compare every rank's output with
// a value computed here in double precision.
//
// Host-layout cases (the hierarchical and host-order tests) use small integer
// inputs, a quarter added for floating types, and +-1 or 2 for products, so
// that sums, products, minima and maxima are exact in every type those tests
// use: results must match bit for bit, except float avg.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "braid.h"
#include "collectives/schedule.h"

namespace braid::testing {

/// An int32 all-to-all for `rank` of `nranks`, `count` elements per block.
coll::CollArgs allToAll(int rank, int nranks, size_t count, size_t chunkBytes, bool inPlace);

/// All-to-all-v blocks for args->rank of args->nranks, from args->count: rank f sends rank t
/// count * ((f + 2t) % 3) / 2 elements (uneven, some empty), blocks in rank order with
/// `gap` unused elements after each.
void setUnevenBlocks(coll::CollArgs* args, size_t gap);

/// Element i of a buffer of `type`, as a double, and the reverse (support/element_bits.h).
double elementAt(braidDataType_t type, const uint8_t* buffer, size_t i);
void setElement(braidDataType_t type, uint8_t* buffer, size_t i, double value);

/// One (type, op) pair of a test grid.
struct TypeOp {
  braidDataType_t type;
  braidRedOp_t op;
};

/// values[0] op values[1] op ..., in that order; avg divides the sum once at the end and
/// truncates toward zero for integer types, as the library does.
double reduceInOrder(braidRedOp_t op, braidDataType_t type, const std::vector<double>& values);

/// One collective on ranks placed on hosts: rank r runs on host hosts[r].
struct HostLayoutCase {
  coll::CollKind kind;
  std::string algorithm;
  std::vector<int> hosts;
  size_t count;
  size_t chunkBytes;
  bool inPlace;
  braidDataType_t type;
  braidRedOp_t op;
  int root;
  bool roundingInputs = false;  // float32 inputs that sums round (determinism checks)
  std::vector<int> domains;     // every rank's cache domain; empty: none given
};

/// "allreduce/hier hosts=0011 count=7 chunk=40 in-place int32 sum root=1".
std::string describe(const HostLayoutCase& c);

/// The case's arguments for `rank`, with the host map; all-to-all-v gets setUnevenBlocks
/// without gaps.
coll::CollArgs argsFor(const HostLayoutCase& c, int rank);

/// Element i of rank r's send buffer.
double inputOf(const HostLayoutCase& c, int rank, size_t i);

/// The reduction over every rank of input element i, in rank order.
double reducedInputs(const HostLayoutCase& c, size_t i);

}  // namespace braid::testing
