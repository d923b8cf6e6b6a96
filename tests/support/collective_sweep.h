// The grid of collective cases a sweep runs on one communicator.
//
// Small counts cover everything: every type x op (for reducing collectives) x
// in-place/out-of-place x root (0 and nranks - 1). The large count covers a
// fixed handful of (type, op, in-place) picks -- 1-, 2-, 4- and 8-byte
// elements, fp16 and bf16, an integer max and a float avg -- because reference
// checks of 10^6 elements on every rank dominate the run time.
#pragma once

#include <cstddef>
#include <vector>

#include "support/collective_cases.h"

namespace braid::testing {

struct SweepSpec {
  std::vector<Collective> collectives;
  std::vector<size_t> counts = {0, 1, 7, 4099};
  size_t largeCount = 1000003;  // 0 skips the large cases
  /// At largeCount, run every type x op (x in-place, one root) instead of the
  /// picks: affordable where ranks are processes with a core budget of their own.
  bool largeEveryTypeAndOp = false;
  /// At the small counts too, only the picks (each at both roots; in-place ones where
  /// the collective has an in-place form): for machines where every case is costly
  /// (an emulated guest), which still see every collective, count and element size.
  bool smallPicksOnly = false;
};

/// Every collective the sweep knows, in a fixed order.
std::vector<Collective> allCollectives();

/// The cases of `spec` for a communicator of `nranks`, in a fixed order that is
/// the same on every rank (ranks must call collectives in the same order).
std::vector<CollectiveCase> sweepCases(const SweepSpec& spec, int nranks);

}  // namespace braid::testing
