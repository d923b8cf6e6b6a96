// BRAID_ALGO / BRAID_PROTO: which algorithm (or protocol) to force, per collective and
// per message size.
//
//   spec   := rule (';' rule)*
//   rule   := [collective ':'] choice (',' choice)*
//   choice := name ['@' lo '-' [hi]]        sizes in bytes, K/M/G suffixes (powers of 1024)
//
// Sizes are the per-rank message (count * type size), lo and hi inclusive; "@64K-" means
// 64 KiB and up. Within a rule the first choice whose range holds the size wins; a choice
// without a range holds every size. A rule naming the collective beats a rule without
// one. Examples: "ring" (everything ring, where it exists), "allreduce:rd@0-16K,ring;
// broadcast:tree", BRAID_PROTO="ll@0-64K,simple". A size no choice covers selects
// automatically. Parsing is strict and names the bad token; whether a name is a known
// algorithm is checked by the algorithm registry (collectives/algorithm.h).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/status.h"

namespace braid {

struct SelectionChoice {
  std::string collective;  // "" for every collective
  std::string name;
  size_t minBytes = 0;
  size_t maxBytes = static_cast<size_t>(-1);
};

class SelectionSpec {
 public:
  /// Parses `text` (the value of `variable`, named in errors). `collectives` are the valid
  /// collective names; an empty text gives an empty spec.
  static Result<SelectionSpec> parse(const std::string& text, const std::string& variable,
                                     const std::vector<std::string>& collectives);

  /// The forced name for `collective` at `bytes` per rank, or "" to select automatically.
  std::string pick(const std::string& collective, size_t bytes) const;

  /// Every choice, in text order.
  const std::vector<SelectionChoice>& choices() const { return choices_; }
  bool empty() const { return choices_.empty(); }

 private:
  std::vector<SelectionChoice> choices_;
};

}  // namespace braid
