// The tuner: turns the cost model into a choice of algorithm and protocol per
// (collective, size, ranks), and prints the resulting table.
//
// The choice is a pure function of its arguments and of the model's constants, both
// identical on every rank (size, ranks and collective are arguments every rank shares;
// the constants are compiled in or agreed at init), so all ranks choose alike without
// talking.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "topology/cost_model.h"

namespace braid::topo {

struct Choice {
  std::string algorithm;
  Protocol protocol = Protocol::kSimple;
  double predictedUs = 0;
};

/// The (algorithm, protocol) among the candidates that `model` predicts fastest on `link`
/// for a call moving `countBytes` per rank on `nranks` ranks; ties go to the earlier
/// candidate. nullopt when the model knows none of them.
std::optional<Choice> fastest(const CostModel& model, const std::string& link, coll::CollKind kind,
                              double countBytes, int nranks,
                              const std::vector<std::string>& candidates,
                              const std::vector<Protocol>& protocols = {Protocol::kSimple});

/// A printable table: one row per per-rank size (8 B, x4, .. maxBytes), one column per
/// collective, each cell what `pick(kind, bytes, nranks)` answers.
std::string tuningTable(int nranks, size_t maxBytes, const std::vector<coll::CollKind>& kinds,
                        const std::function<std::string(coll::CollKind, size_t, int)>& pick);

}  // namespace braid::topo
