// One thread per rank for braidCommInitAll, started all or none.
//
// std::thread's constructor throws when the system refuses a thread, and a joinable
// std::thread destroyed by that unwinding ends the process (std::terminate). Here every
// thread first waits at a gate: if any thread fails to start, the gate opens with "stop",
// the started threads return without running their rank (so none waits for a peer that will
// never come), and the caller gets an error instead of a dead process.
#pragma once

#include <functional>

#include "core/status.h"

namespace braid::api {

/// Runs body(0..n-1) on n threads and joins them; an error naming the rank whose thread
/// could not start, in which case no body ran.
Status runOnRankThreads(int n, const std::function<void(int rank)>& body);

/// Tests only: the `nth` thread start from now (0-based) fails as if the system refused
/// it; -1 turns this off.
void failThreadStartForTesting(int nth);

}  // namespace braid::api
