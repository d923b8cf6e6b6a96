// Runs a collective sweep on in-process ranks and reports failures through gtest.
//
// Shared by the collectives_*_test.cc files, which are value-parameterised
// over (transport, nranks): one communicator per test case, all of the sweep's
// cases on it, because creating communicators is the expensive part.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "support/collective_sweep.h"
#include "support/spawn.h"

namespace braid::testing {

/// (transport, nranks), the parameter of every sweep test.
using SweepParam = std::tuple<std::string, int>;

/// "shm_4ranks": a test-name suffix for gtest's INSTANTIATE_TEST_SUITE_P.
std::string sweepParamName(const ::testing::TestParamInfo<SweepParam>& info);

/// Runs sweepCases(spec, nranks) on every rank of one communicator created with
/// `options`; each failure (at most a few per rank, then a count) is an ADD_FAILURE.
void runSweepOnThreads(int nranks, const SweepSpec& spec, const SpawnOptions& options);

/// The rank counts every sweep covers (use with ::testing::ValuesIn).
inline const std::vector<int>& sweepRankCounts() {
  static const std::vector<int> kCounts = {1, 2, 3, 4, 5, 8};
  return kCounts;
}

/// The transports every sweep covers.
inline const std::vector<std::string>& sweepTransports() {
  static const std::vector<std::string> kTransports = {"shm", "socket"};
  return kTransports;
}

}  // namespace braid::testing
