// Cutting one large device call into pieces the proxy pipelines.
//
// Staged whole, a large call runs copy out -> host collective -> copy back one after the
// other. Cut into pieces queued as consecutive calls (all copies out first, then each
// piece's wait and copy back), the stream copies piece i+1 out and piece i-1 back while the
// proxy thread runs piece i. Only elementwise collectives are cut — all-reduce, reduce,
// broadcast: element j of the answer depends only on element j of the inputs, so a piece
// is the same collective on a sub-range, and every rank cuts the same way (same count, same
// piece size), so the ranks' calls still match one to one.
#pragma once

#include <cstddef>
#include <vector>

#include "comm/op.h"

namespace braid {

/// `op` as consecutive pieces of at most `pieceBytes` (whole elements) when it is
/// elementwise and spans more than two pieces; otherwise `op` alone.
std::vector<Op> pipelinePieces(const Op& op, size_t pieceBytes);

}  // namespace braid
