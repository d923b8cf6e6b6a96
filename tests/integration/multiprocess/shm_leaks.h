// Finds /dev/shm/braid-* segments that outlived their processes.
//
// Other tests may run at the same time (ctest -j), so a segment only counts as
// leaked when it appeared after `before` was taken and no live process has it
// open or mapped, on every look during a short grace period.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace braid::testing {

/// The names of /dev/shm entries starting with "braid-".
std::set<std::string> braidShmSegments();

/// Segments absent from `before` that no process holds, checked `looks` times
/// 0.5 s apart; empty when none leaked.
std::vector<std::string> leakedShmSegments(const std::set<std::string>& before, int looks = 3);

}  // namespace braid::testing
