// What one rank needs to join a communicator derived from another (split, shrink, grow).
//
// Deriving a communicator has two phases: the ranks agree, over the parent, on who joins
// what (the plan), then each joins the new communicator's unique id. The second phase needs
// nothing from the parent, so it can run later on a thread of its own (a non-blocking
// config) while the parent's handle is used, or even released, meanwhile.
#pragma once

#include <string>

#include "bootstrap/unique_id.h"

namespace braid {

struct JoinPlan {
  bootstrap::UniqueId id;  // the new communicator's root and secret
  int nranks = 0;
  int rank = -1;  // this rank's place in it; -1: it gets no communicator
  std::string tagPrefix;

  bool joins() const { return rank >= 0; }
};

}  // namespace braid
